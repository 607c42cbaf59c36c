import http from 'node:http';
import https from 'node:https';
import { signerRequestOptions, type SignerEndpoint } from './signerEndpoint';

/**
 * The HTTP leg to the signing service: requests over a keep-alive `node:http` (or `node:https`) agent,
 * on TCP or on the service's Unix-domain socket (signerEndpoint.ts). Every signed answer crosses it, so
 * it avoids what fetch adds per request (a Request and Response object, body streams, an
 * `AbortSignal.timeout` made transferable: about 5 % of the api's CPU under load, docs/performance.md
 * "Paymaster"). Connections stay open between requests; one timer bounds the whole exchange (connect,
 * send, answer), as fetch's signal did.
 */

export type SignerPostOutcome =
  { ok: true; status: number; text: string } | { ok: false; timedOut: boolean; message: string };

export interface SignerTransport {
  /** POST `body` to the service's `/rpc`. */
  post(body: string): Promise<SignerPostOutcome>;
  /** GET the service's unauthenticated `/health`. */
  health(): Promise<SignerPostOutcome>;
}

/**
 * Free sockets idle longer than this are closed on our side, before node:http's default 5 s keep-alive
 * timeout on the signer's side can close one as we reuse it. Node unrefs free sockets: an idle agent
 * never keeps a process alive.
 */
const IDLE_SOCKET_MS = 4_000;

export function createSignerTransport({
  endpoint,
  headers,
  timeoutMs,
}: {
  endpoint: SignerEndpoint;
  /** Sent with every `/rpc` request (content type, the shared secret). */
  headers: Record<string, string>;
  timeoutMs: number;
}): SignerTransport {
  const secure = endpoint.kind === 'network' && endpoint.secure;
  const agent = new (secure ? https.Agent : http.Agent)({
    keepAlive: true,
    timeout: IDLE_SOCKET_MS,
    scheduling: 'lifo',
  });
  const request = secure ? https.request : http.request;
  const rpcOptions = { ...signerRequestOptions(endpoint, 'rpc'), method: 'POST', agent };
  const healthOptions = { ...signerRequestOptions(endpoint, 'health'), method: 'GET', agent };

  function exchange(options: http.RequestOptions, body?: string): Promise<SignerPostOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (outcome: SignerPostOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const outgoing = request(options, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          finish({
            ok: true,
            status: response.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', (error) => finish({ ok: false, timedOut: false, message: error.message }));
      });
      const timer = setTimeout(() => {
        finish({ ok: false, timedOut: true, message: `no answer within ${timeoutMs} ms` });
        outgoing.destroy();
      }, timeoutMs);
      outgoing.on('error', (error) => finish({ ok: false, timedOut: false, message: error.message }));
      outgoing.end(body);
    });
  }

  return {
    post: (body) =>
      exchange({ ...rpcOptions, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, body),
    health: () => exchange(healthOptions),
  };
}
