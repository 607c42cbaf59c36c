import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A merchant's approval receiver on a real port (the third party of issue 43's approval webhook): it
 * records every request (headers, raw body, when) and answers as the test tells it. And a relay in front
 * of the signing service that records when the paymaster asked for a signature, so a test can say that
 * nothing was signed before the receiver answered.
 */

export interface ReceivedApproval {
  headers: IncomingMessage['headers'];
  rawBody: string;
  body: { id: string; type: string; data: Record<string, unknown> };
  /** How many signing requests the relay had seen when this approval request arrived. */
  signingRequestsBefore: number;
}

export type ApprovalHandler = (request: ReceivedApproval, response: ServerResponse) => void;

export interface ApprovalReceiver {
  url: string;
  received: ReceivedApproval[];
  /** The answer to the next requests. */
  answerWith(handler: ApprovalHandler): void;
  /** Resolves once `count` requests arrived. */
  requestsArrived(count: number): Promise<void>;
  close(): Promise<void>;
}

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });

export const answerJson =
  (status: number, body: unknown): ApprovalHandler =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

export async function startApprovalReceiver(signing?: SigningRelay): Promise<ApprovalReceiver> {
  const received: ReceivedApproval[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const held: ServerResponse[] = [];
  let handler: ApprovalHandler = answerJson(200, { sponsor: true });
  const server = createServer((request, response) => {
    const signingRequestsBefore = signing?.requests.length ?? 0;
    void readBody(request).then((rawBody) => {
      const approval: ReceivedApproval = {
        headers: request.headers,
        rawBody,
        body: JSON.parse(rawBody),
        signingRequestsBefore,
      };
      received.push(approval);
      held.push(response);
      for (const waiter of waiters.filter((item) => received.length >= item.count)) {
        waiter.resolve();
        waiters.splice(waiters.indexOf(waiter), 1);
      }
      handler(approval, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/approve`,
    received,
    answerWith(next) {
      handler = next;
    },
    requestsArrived(count) {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      // Answers held open on purpose (the slow receiver) end with the server.
      for (const response of held) if (!response.writableEnded) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface SigningRelay {
  url: string;
  /** Every signing request passed on, in order. */
  requests: { at: number }[];
  close(): Promise<void>;
}

/** Passes every request to the signing service unchanged, recording it. */
export async function startSigningRelay(signerUrl: string): Promise<SigningRelay> {
  const upstream = new URL(signerUrl);
  const requests: { at: number }[] = [];
  const server = createServer((request, response) => {
    requests.push({ at: performance.now() });
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: `${upstream.pathname.replace(/\/$/, '')}${request.url}`,
        headers: { ...request.headers, host: upstream.host },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => {
      response.writeHead(502);
      response.end();
    });
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
