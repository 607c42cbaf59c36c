import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findFreePort } from '../dev/services/freePort';
import { sendWebhook, type SendWebhookParameters } from './sendWebhook';

/** sendWebhook against a real HTTP server on a loopback port. */
describe('sendWebhook', () => {
  let server: Server;
  let port: number;
  let seen: { path: string; headers: Record<string, unknown>; body: string }[];

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({
          path: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString(),
        });
        if (request.url === '/ok') return void response.writeHead(200).end('thanks');
        if (request.url === '/big') return void response.writeHead(500).end('y'.repeat(100_000));
        if (request.url === '/redirect') return void response.writeHead(301, { location: '/ok' }).end();
        // '/slow': never answers
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  beforeEach(() => {
    seen = [];
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const send = (overrides: Partial<SendWebhookParameters>) =>
    sendWebhook({
      url: `http://127.0.0.1:${port}/ok`,
      rawBody: '{"id":"evt_1"}',
      headers: { 'content-type': 'application/json', 'x-service-event-id': 'evt_1' },
      allowPrivateTargets: true,
      timeoutMs: 2_000,
      responseBodyLimitBytes: 16,
      ...overrides,
    });

  it('POSTs the exact body with the given headers and reports a 2xx as succeeded', async () => {
    const result = await send({});
    expect(result).toMatchObject({
      outcome: 'succeeded',
      statusCode: 200,
      responseBody: 'thanks',
      error: null,
    });
    expect(seen).toEqual([
      {
        path: '/ok',
        headers: expect.objectContaining({ 'x-service-event-id': 'evt_1', 'content-length': '14' }),
        body: '{"id":"evt_1"}',
      },
    ]);
  });

  it('keeps only the first bytes of a large answer', async () => {
    const result = await send({ url: `http://127.0.0.1:${port}/big` });
    expect(result).toMatchObject({
      outcome: 'http_error',
      statusCode: 500,
      responseBody: 'y'.repeat(16),
      error: 'HTTP 500',
    });
  });

  it('does not follow a redirect', async () => {
    const result = await send({ url: `http://127.0.0.1:${port}/redirect` });
    expect(result).toMatchObject({
      outcome: 'http_error',
      statusCode: 301,
      error: 'redirect (301) not followed',
    });
    expect(seen.map(({ path }) => path)).toEqual(['/redirect']);
  });

  it('gives up at the deadline', async () => {
    const result = await send({ url: `http://127.0.0.1:${port}/slow`, timeoutMs: 300 });
    expect(result).toMatchObject({ outcome: 'timeout', statusCode: null });
    expect(result.latencyMs).toBeGreaterThanOrEqual(290);
    expect(result.latencyMs).toBeLessThan(2_000);
  });

  it('stops when its signal aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(await send({ url: `http://127.0.0.1:${port}/slow`, signal: controller.signal })).toMatchObject({
      outcome: 'timeout',
      error: 'attempt cancelled',
    });
  });

  it('reports a refused connection as a network error', async () => {
    const closedPort = await findFreePort();
    const result = await send({ url: `http://127.0.0.1:${closedPort}/ok` });
    expect(result).toMatchObject({
      outcome: 'network_error',
      statusCode: null,
      error: expect.stringMatching(/^ECONNREFUSED/),
    });
    // The merchant reads this error: the internal address it failed on is not shown.
    expect(result.error).not.toContain('127.0.0.1');
    expect(result.error).toContain('[non-public address]');
  });

  describe('with private targets refused', () => {
    it.each([
      ['a loopback literal', () => `http://127.0.0.1:${port}/ok`],
      ['an IPv6 loopback literal', () => `http://[::1]:${port}/ok`],
      ['a name that resolves to loopback', () => `http://localhost:${port}/ok`],
    ])('refuses %s before connecting', async (_case, url) => {
      const result = await send({ url: url(), allowPrivateTargets: false });
      expect(result).toMatchObject({ outcome: 'blocked_address', statusCode: null });
      expect(seen).toEqual([]);
    });

    it('says a name resolves only to non-public addresses without naming them', async () => {
      const result = await send({ url: `http://localhost:${port}/ok`, allowPrivateTargets: false });
      expect(result.error).toBe('localhost resolves only to non-public addresses');
    });
  });
});
