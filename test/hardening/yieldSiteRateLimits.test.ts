import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { startTestApp, type TestApp } from '../harness/app';

/**
 * Security review II, finding 7: the yield sites (`/` on a custom domain's Host, `/sites/<id>`) are public
 * reads and share the per-IP public-read allowance (RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE), refused with
 * 429 and Retry-After before any lookup.
 */
describe('yield site rate limits', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: '4' });
  });
  afterAll(() => limited?.close());

  /** GET with a chosen Host and client IP (fetch may not set Host). */
  function get(path: string, { host, ip }: { host?: string; ip: string }) {
    const url = new URL(limited.baseUrl);
    return new Promise<{ status: number; retryAfter: string | undefined; body: string }>(
      (resolve, reject) => {
        const sent = httpRequest(
          {
            hostname: url.hostname,
            port: url.port,
            path,
            headers: { 'x-forwarded-for': ip, ...(host && { host }) },
          },
          (response) => {
            let body = '';
            response.on('data', (chunk) => (body += chunk));
            response.on('end', () =>
              resolve({
                status: response.statusCode!,
                retryAfter: response.headers['retry-after'] as string | undefined,
                body,
              }),
            );
          },
        );
        sent.on('error', reject);
        sent.end();
      },
    );
  }

  it('finding 7 — /sites/<id> and / by Host share the per-IP public-read allowance: past it 429 with Retry-After, another IP is served', async () => {
    const ip = '198.51.100.70';
    for (let request = 1; request <= 2; request++)
      expect((await get(`/sites/${randomUUID()}`, { ip })).status).toBe(404);
    for (let request = 1; request <= 2; request++)
      expect((await get('/', { ip, host: 'invest.brand.example' })).status).toBe(404);
    for (const refused of [
      await get(`/sites/${randomUUID()}`, { ip }),
      await get('/', { ip, host: 'invest.brand.example' }),
    ]) {
      expect(refused.status).toBe(429);
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(refused.body).message).toMatch(
        /^Too many requests from this client; retry after \d+ s$/,
      );
    }
    expect((await get('/', { ip: '198.51.100.71', host: 'invest.brand.example' })).status).toBe(404);
    expect((await get(`/sites/${randomUUID()}`, { ip: '198.51.100.71' })).status).toBe(404);
  });
});
