import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';

/** The api's HTTP server (api/main.ts and the test harness both serve the Koa app through it). */
export interface ApiServer {
  server: Server;
  /** From now on every response closes its connection, so keep-alive clients reconnect (to another replica). */
  closeConnectionsAfterResponses(): void;
}

/**
 * Serves `handler` (Koa's `callback()`). A request with an `Expect` value other than `100-continue`
 * is answered as if the header were absent: Node would answer 417 itself before the app ran (a status
 * the contract does not declare), and RFC 9110 §10.1.1 lets a server ignore an expectation it does not
 * know. `100-continue` keeps Node's handling (a 100 Continue, then the request).
 */
export function createApiServer(handler: RequestListener): ApiServer {
  let closeAfterResponse = false;
  // Answers not yet started, so those in flight when the stop begins also close their connections.
  const unanswered = new Set<ServerResponse>();
  const onRequest: RequestListener = (request, response) => {
    if (closeAfterResponse) response.shouldKeepAlive = false;
    else {
      unanswered.add(response);
      response.once('close', () => unanswered.delete(response));
    }
    handler(request, response);
  };
  // Idle keep-alive connections are closed by the balancer in front (HAProxy's http-keep-alive timeout
  // is shorter), never by us while it may be sending a request on them.
  const server = createServer({ keepAliveTimeout: 65_000, headersTimeout: 66_000 }, onRequest);
  server.on('checkExpectation', onRequest);
  server.on('clientError', answerMalformedRequest);
  return {
    server,
    closeConnectionsAfterResponses() {
      closeAfterResponse = true;
      for (const response of unanswered) if (!response.headersSent) response.shouldKeepAlive = false;
      unanswered.clear();
    },
  };
}

/** Node's statuses for a request it cannot parse: headers too large, too slow to arrive, or malformed. */
const MALFORMED_REQUEST_STATUS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

/**
 * A request Node's parser refuses before the app sees it (a malformed `Transfer-Encoding`, a bad header
 * line) gets the contract's JSON error body, not Node's bare `400 Bad Request` without a Content-Type
 * (schemathesis sent `Transfer-Encoding: v#` once); the connection closes, as Node's own answer does.
 */
function answerMalformedRequest(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [statusCode, reason] = MALFORMED_REQUEST_STATUS[error.code ?? ''] ?? [400, 'Bad Request'];
  const body = JSON.stringify({
    statusCode,
    message: `The request could not be read (${reason})`,
    error: reason,
  });
  socket.end(
    `HTTP/1.1 ${statusCode} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export interface GracefulStopOptions {
  /** Called first: `/ready` answers 503 from here on, so a load balancer takes the replica out. */
  markNotReady(): void;
  /** How long the replica keeps serving (and accepting) after turning not ready: the balancer's detection time. */
  drainMs: number;
  /** From the call, the most the in-flight requests may take before their connections are cut. */
  deadlineMs: number;
  log(message: string, details?: Record<string, unknown>): void;
}

/**
 * The api's graceful stop (SIGTERM, SIGINT): not ready at once, keeps serving through the drain period
 * (answers from then on close their connections), then accepts no more connections, closes the idle
 * ones and waits for the requests in flight, at most until the deadline, when the rest are cut.
 * Resolves with how many connections had to be cut (0 when everything finished).
 */
export async function stopGracefully(
  { server, closeConnectionsAfterResponses }: ApiServer,
  { markNotReady, drainMs, deadlineMs, log }: GracefulStopOptions,
): Promise<{ cutConnections: number }> {
  const deadline = Date.now() + deadlineMs;
  markNotReady();
  closeConnectionsAfterResponses();
  log('api stopping: not ready, draining', { drainMs, deadlineMs });
  await delay(Math.max(0, Math.min(drainMs, deadline - Date.now())));
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // close() stops accepting and (Node 19+) closes idle keep-alive connections; said again to be sure.
  server.closeIdleConnections();
  const inFlight = await countConnections(server);
  log('api draining done: waiting for requests in flight', { connections: inFlight });
  const finished = await Promise.race([
    closed.then(() => true),
    delay(Math.max(0, deadline - Date.now())).then(() => false),
  ]);
  if (finished) return { cutConnections: 0 };
  const cut = await countConnections(server);
  server.closeAllConnections();
  await closed;
  return { cutConnections: cut };
}

function countConnections(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}
