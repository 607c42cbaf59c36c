import { startTestApp, type TestApp } from '../test/harness/app';

describe('HTTP skeleton', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ BODY_LIMIT_BYTES: '2048' });
  });
  afterAll(() => app.close());

  it('GET /health answers ok with the short commit id', async () => {
    const response = await app.request('/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', revision: expect.stringMatching(/^[0-9a-f]{7,12}$/) });
  });

  it('gives every response a request id, echoing a well-formed one', async () => {
    const echoed = await app.request('/health', { headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123');
    const generated = await app.request('/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('an unknown route answers 404 with the framework-style body', async () => {
    const response = await app.request('/v1/no-such-thing');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      statusCode: 404,
      message: 'Cannot GET /v1/no-such-thing',
      error: 'Not Found',
    });
  });

  it('malformed JSON answers 400 with the framework-style body', async () => {
    const response = await app.request('/v1/anything', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"amount": ',
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      statusCode: 400,
      message: 'Malformed JSON in request body',
      error: 'Bad Request',
      errors: [],
    });
  });

  it('a body over the limit answers 413, whether or not Content-Length announces it', async () => {
    const big = JSON.stringify({ blob: 'x'.repeat(4096) });
    const announced = await app.request('/v1/anything', { method: 'POST', json: JSON.parse(big) });
    expect(announced.status).toBe(413);
    expect(announced.body).toEqual({
      statusCode: 413,
      message: 'Request body larger than 2048 bytes',
      error: 'Payload Too Large',
    });

    // Chunked upload: no Content-Length, the limit is enforced while reading.
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const chunked = await fetch(`${app.baseUrl}/v1/anything`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
  });

  it('GET /metrics exposes Prometheus text with request counters by route pattern', async () => {
    await app.request('/health');
    const response = await app.request('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(response.text).toMatch(/http_requests_total\{method="GET",route="\/health",status="200"\} \d+/);
    expect(response.text).toContain('process_cpu_seconds_total');
  });

  describe('/metrics behind METRICS_TOKEN', () => {
    const TOKEN = 'metrics-token-0123456789';
    let guarded: TestApp;
    let production: TestApp;
    beforeAll(async () => {
      guarded = await startTestApp({ METRICS_TOKEN: TOKEN });
      production = await startTestApp({
        NODE_ENV: 'production',
        PUBLIC_BASE_URL: 'https://pay.example.com',
        PLATFORM_TREASURY_ADDRESS: '0x000000000000000000000000000000000000dEaD',
        WEBHOOK_SECRET_ENCRYPTION_KEY: '11'.repeat(32),
        EMAIL_CODE_HASH_KEY: '22'.repeat(32),
      });
    });
    afterAll(() => Promise.all([guarded?.close(), production?.close()]));

    it('answers 401 without the bearer token or with another, and the figures with it', async () => {
      for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }] as Record<
        string,
        string
      >[]) {
        const refused = await guarded.request('/metrics', { headers });
        expect(refused.status).toBe(401);
        expect(refused.body).toMatchObject({ statusCode: 401 });
        expect(refused.text).not.toContain('http_requests_total');
      }
      const allowed = await guarded.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(allowed.status).toBe(200);
      expect(allowed.text).toContain('http_requests_total');
    });

    it('is off (404) in production without a token', async () => {
      const response = await production.request('/metrics');
      expect(response.status).toBe(404);
      expect(response.text).not.toContain('process_cpu_seconds_total');
    });
  });

  it('GET /health answered before the middleware chain (issue 33) is what the Koa stack answers: body, headers, access line, metric', async () => {
    // A query string takes the whole Koa stack; the plain path is answered before it.
    const fast = await app.request('/health', { headers: { 'x-request-id': 'fast-1' } });
    const koa = await app.request('/health?via=koa', { headers: { 'x-request-id': 'koa-1' } });
    expect(fast.body).toEqual(koa.body);
    for (const header of ['content-type', 'content-length'])
      expect(fast.headers.get(header)).toBe(koa.headers.get(header));
    expect(fast.headers.get('x-request-id')).toBe('fast-1');
    const lines = app.logLines.map((raw) => JSON.parse(raw));
    const fastLine = lines.find((entry) => entry.requestId === 'fast-1');
    const koaLine = lines.find((entry) => entry.requestId === 'koa-1');
    expect(Object.keys(fastLine).sort()).toEqual(Object.keys(koaLine).sort());
    expect(fastLine).toMatchObject({
      msg: 'request',
      method: 'GET',
      route: '/health',
      path: '/health',
      status: 200,
    });
    const count = async () =>
      Number(
        /http_requests_total\{method="GET",route="\/health",status="200"\} (\d+)/.exec(
          (await app.request('/metrics')).text,
        )![1],
      );
    const before = await count();
    await app.request('/health');
    expect(await count()).toBe(before + 1);
  });

  it('writes one JSON access-log line per request', async () => {
    await app.request('/health', { headers: { 'x-request-id': 'log-check-1' } });
    const line = app.logLines
      .map((raw) => JSON.parse(raw))
      .find((entry) => entry.requestId === 'log-check-1');
    expect(line).toMatchObject({ msg: 'request', method: 'GET', route: '/health', status: 200 });
  });
});
