import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  /** 1-based order of arrival. */
  number: number;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  receivedAt: Date;
}

/** What the receiver does with the n-th request: answer with a status (and body, possibly late), or never answer. */
export type ReceiverBehaviour = (
  request: ReceivedWebhook,
) => { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'hang';

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  port: number;
  received: ReceivedWebhook[];
  /** Resolves once `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  setBehaviour(behaviour: ReceiverBehaviour): void;
  close(): Promise<void>;
}

/** A real HTTP receiver on a free loopback port that records every request byte for byte. */
export async function startWebhookReceiver(
  behaviour: ReceiverBehaviour = () => ({ status: 200, body: 'ok' }),
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const hanging: ServerResponse[] = [];
  let current = behaviour;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const webhook: ReceivedWebhook = {
        number: received.length + 1,
        path: request.url ?? '/',
        headers: request.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        receivedAt: new Date(),
      };
      received.push(webhook);
      for (const waiter of waiters.filter((candidate) => received.length >= candidate.count))
        waiter.resolve();
      const answer = current(webhook);
      if (answer === 'hang') {
        hanging.push(response);
        return;
      }
      const respond = () => {
        response.writeHead(answer.status, answer.headers ?? { 'content-type': 'text/plain' });
        response.end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(respond, answer.delayMs);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    received,
    setBehaviour(next) {
      current = next;
    },
    waitFor(count, timeoutMs = 30_000) {
      if (received.length >= count) return Promise.resolve(received.slice(0, count));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received.slice(0, count));
          },
        });
      });
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
