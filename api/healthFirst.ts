import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type { Logger } from '../logging/logger';
import { customHostnameReader } from './customDomainHosts';
import type { HttpMetrics } from './metrics';
import { acceptableRequestId, REQUEST_ID_HEADER } from './middleware/requestContext';

/**
 * `GET /health` answered before Koa builds a context or runs its middleware (issue 33, item 2): liveness is
 * polled by every load balancer and orchestrator, and its answer never changes. What the contract keeps
 * is kept, as the middleware would do it: the X-Request-Id header (the caller's when well-formed), one
 * JSON access line with the same fields, and the `http_requests_total` / `http_request_duration_seconds`
 * observation under route `/health`. Anything else — another method or path, a query string, a Host that
 * could be a merchant's custom domain (which serves only its yield site), a forwarded host, or tracing
 * on (each request is a span) — goes through the whole Koa stack as before.
 */

export interface HealthFirstOptions {
  revision: string;
  logger: Logger;
  metrics: HttpMetrics;
  /** The API's own host (PUBLIC_BASE_URL): like an IP or a single label, never a custom domain. */
  publicBaseUrl: string;
  /** Off when tracing is on: the request span comes from a middleware. */
  enabled: boolean;
}

const HEALTH_PATH = '/health';

/** A Koa application whose request handler answers `GET /health` itself and hands every other request to Koa. */
export class HealthFirstKoa extends Koa {
  constructor(
    options: { proxy: boolean; maxIpsCount: number },
    private readonly health: HealthFirstOptions,
  ) {
    super(options);
  }

  override callback(): ReturnType<Koa['callback']> {
    const handleWithKoa = super.callback();
    if (!this.health.enabled) return handleWithKoa;
    const answerHealth = healthAnswerer(this.health);
    // Koa's handler takes HTTP/2 requests too; only node:http's (the api's server) are answered here.
    return (req, res) =>
      req instanceof IncomingMessage && res instanceof ServerResponse && answerHealth(req, res)
        ? Promise.resolve()
        : handleWithKoa(req, res);
  }
}

/** Answers and returns true for a health request it may take; false leaves the request untouched. */
function healthAnswerer({
  revision,
  logger,
  metrics,
  publicBaseUrl,
}: HealthFirstOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const body = JSON.stringify({ status: 'ok', revision });
  const length = String(Buffer.byteLength(body));
  // The same logger the access line of requestContext uses: no redaction (none of its fields is a secret).
  const accessLog = logger.child({}, { redact: [] });
  // The Host read as the custom-domain guard reads it (security review III, finding 5).
  const customHostnameOf = customHostnameReader(publicBaseUrl);

  return (req, res) => {
    if (req.method !== 'GET' || req.url !== HEALTH_PATH) return false;
    const headers = req.headers;
    if (headers['x-forwarded-host'] !== undefined || customHostnameOf(headers.host) !== undefined)
      return false;
    const started = process.hrtime.bigint();
    const incoming = headers[REQUEST_ID_HEADER];
    const requestId =
      typeof incoming === 'string' && acceptableRequestId.test(incoming) ? incoming : randomUUID();
    res.writeHead(200, {
      'X-Request-Id': requestId,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': length,
    });
    res.end(body);
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    metrics.observe('GET', HEALTH_PATH, 200, durationMs / 1000);
    accessLog.info(
      {
        requestId,
        method: 'GET',
        route: HEALTH_PATH,
        path: HEALTH_PATH,
        status: 200,
        durationMs: Math.round(durationMs * 100) / 100,
      },
      'request',
    );
    return true;
  };
}
