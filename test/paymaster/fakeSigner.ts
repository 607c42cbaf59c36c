import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the signing service on a real port, speaking its HTTP + JSON-RPC protocol, used only
 * to make the service fail in the ways the API must survive (errors, timeouts, garbage, wrong mode).
 * The real service (signer/) answers the happy path in the other tests.
 */
export interface FakeSignerRequest {
  headers: IncomingHttpHeaders;
  path: string;
  body: { jsonrpc: string; id: unknown; method: string; params: [Record<string, unknown>] };
}

export type FakeSignerReply =
  | { kind: 'json-rpc-error'; code: number; message: string }
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'http'; status: number; body: string }
  | { kind: 'hang'; ms: number };

export interface FakeSigner {
  url: string;
  requests: FakeSignerRequest[];
  /** What the next requests get, until changed. */
  replyWith(reply: FakeSignerReply): void;
  close(): Promise<void>;
}

export async function startFakeSigner(): Promise<FakeSigner> {
  const requests: FakeSignerRequest[] = [];
  let reply: FakeSignerReply = { kind: 'http', status: 503, body: 'not configured' };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      requests.push({ headers: request.headers, path: request.url ?? '', body });
      const current = reply;
      const send = (status: number, text: string) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(text);
      };
      switch (current.kind) {
        case 'json-rpc-error':
          return send(
            200,
            JSON.stringify({
              jsonrpc: '2.0',
              id: body.id,
              error: { code: current.code, message: current.message },
            }),
          );
        case 'result':
          return send(200, JSON.stringify({ jsonrpc: '2.0', id: body.id, result: current.result }));
        case 'http':
          return send(current.status, current.body);
        case 'hang': {
          const timer = setTimeout(() => send(200, '{}'), current.ms);
          response.on('close', () => clearTimeout(timer));
          return;
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    replyWith(next) {
      reply = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
