import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for a bundler provider on a real port (the provider is a third party): it records the
 * bytes it receives and answers as told — JSON-RPC text exactly as given, another HTTP status, or a
 * body that is not JSON — so the proxy's relay and its failure answers can be checked.
 * Real relaying to a real bundler (Alto) is covered by the end-to-end tests.
 */
export interface FakeBundlerRequest {
  /** Path and query as received (the provider's credential travels here). */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type FakeBundlerReply = { status: number; contentType: string; body: string };

export interface FakeBundlerUpstream {
  /** Base URL, e.g. http://127.0.0.1:40123 */
  origin: string;
  requests: FakeBundlerRequest[];
  replyWith(reply: FakeBundlerReply): void;
  close(): Promise<void>;
}

export async function startFakeBundlerUpstream(): Promise<FakeBundlerUpstream> {
  const requests: FakeBundlerRequest[] = [];
  let reply: FakeBundlerReply = {
    status: 200,
    contentType: 'application/json',
    body: '{"jsonrpc":"2.0","id":1,"result":null}',
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(reply.status, { 'content-type': reply.contentType });
      response.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    replyWith(next) {
      reply = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
