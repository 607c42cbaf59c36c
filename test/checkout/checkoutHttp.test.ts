import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { paymentQrSvg } from '../../web/checkout/paymentQrCode';

/** GET /pay/{id} over plain HTTP: status codes, headers, escaping, and what the HTML carries. */
describe('checkout page over HTTP', () => {
  let app: TestApp;
  let sk: { authorization: string };

  beforeAll(async () => {
    app = await startTestApp();
    sk = { authorization: `Bearer ${await createApiKey(app, await signInNewMerchant(app))}` };
  });
  afterAll(() => app.close());

  async function createSession(json: object): Promise<string> {
    const response = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { sandboxMode: true, ...json },
    });
    expect(response.status).toBe(201);
    return response.body.id;
  }

  const nonceOf = (csp: string) => /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];

  it.each([
    ['an unknown id', randomUUID()],
    ['a malformed id', 'not-a-uuid'],
    ['an id with markup', encodeURIComponent('<b>x</b>')],
    ['an almost-UUID', '123e4567-e89b-12d3-a456-42661417400'],
  ])('%s answers the 404 HTML page', async (_case, id) => {
    const response = await app.request(`/pay/${id}`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.text).toContain('<title>Payment link not found</title>');
    expect(response.text).not.toContain('<b>x</b>');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('answers 200 HTML with a per-response nonce CSP that allows nothing external', async () => {
    const id = await createSession({ amount: '5' });
    const [first, second] = [await app.request(`/pay/${id}`), await app.request(`/pay/${id}`)];
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(first.headers.get('cache-control')).toBe('no-store');
    const csp = first.headers.get('content-security-policy')!;
    const nonce = nonceOf(csp)!;
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(nonceOf(second.headers.get('content-security-policy')!)).not.toBe(nonce);
    expect(csp.split('; ')).toEqual([
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "img-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ]);
    expect(csp).not.toContain('unsafe');

    // Every executable script and style carries the nonce; the only other script is a JSON data block.
    const scripts = [...first.text.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1]!.trim());
    expect(scripts).toEqual(['type="application/json" id="checkout-data"', `nonce="${nonce}"`]);
    expect([...first.text.matchAll(/<style\b([^>]*)>/g)].map((match) => match[1]!.trim())).toEqual([
      `nonce="${nonce}"`,
    ]);
    // Nothing is loaded from anywhere: no src attributes, no stylesheet links, no CSS imports or urls.
    expect(first.text).not.toMatch(/\ssrc=/i);
    expect(first.text).not.toMatch(/<link(?![^>]*href="data:,")/i);
    const css = /<style[^>]*>([^<]*)<\/style>/.exec(first.text)![1]!;
    expect(css).not.toMatch(/@import|url\(/i);
    expect(first.text).not.toMatch(/\sstyle=/i);
  });

  it('escapes a hostile merchant name, line item and success URL', async () => {
    const merchantName = '<script>alert(1)</script>';
    const id = await createSession({
      amount: '1',
      merchantName,
      lineItems: [{ name: '"><img src=x onerror=alert(2)>', quantity: 1, unitPrice: '1', total: '1' }],
      successUrl: 'https://shop.example/done?next=</script><script>alert(3)</script>',
    });
    const { status, text } = await app.request(`/pay/${id}`);
    expect(status).toBe(200);
    expect(text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(text).toContain('&quot;&gt;&lt;img src=x onerror=alert(2)&gt;');
    expect(text).not.toContain('<script>alert');
    expect(text).not.toContain('<img');
    expect(text.match(/<\/script>/g)).toHaveLength(2);
    const data = JSON.parse(
      /<script type="application\/json" id="checkout-data">([^<]*)<\/script>/.exec(text)![1]!,
    );
    expect(data.successUrl).toBe('https://shop.example/done?next=</script><script>alert(3)</script>');
  });

  it('shows the exact token amounts from base units and embeds the QR code of each payment URI', async () => {
    const id = await createSession({
      amount: '1234.567891',
      merchantName: 'Exact Amounts Ltd',
      paymentOptionSymbols: ['USDC', 'USDe'],
    });
    const { paymentOptions } = (await app.request(`/v1/sessions/${id}`)).body as {
      paymentOptions: { symbol: string; amount: string; paymentUri: string }[];
    };
    const { text } = await app.request(`/pay/${id}`);
    expect(paymentOptions.map((option) => option.amount)).toContain('1234567891');
    expect(paymentOptions.map((option) => option.amount)).toContain('1234567891000000000000');
    // Three testnets, each with a panel per token: the number, then the symbol.
    expect(text.match(/>1234\.567891 <span class="option-symbol">USDC<\/span>/g)).toHaveLength(3);
    expect(text.match(/>1234\.567891 <span class="option-symbol">USDe<\/span>/g)).toHaveLength(3);
    expect(text).toContain('$1,234.567891');
    for (const option of paymentOptions) {
      expect(text).toContain(await paymentQrSvg(option.paymentUri));
      expect(text).toContain(`href="${option.paymentUri.replace(/&/g, '&amp;')}"`);
    }
  });

  it('shows no sandbox badge for a live session', async () => {
    const id = await createSession({ amount: '2', sandboxMode: true });
    await app.db.updateTable('sessions').set({ sandbox_mode: false }).where('id', '=', id).execute();
    const { text } = await app.request(`/pay/${id}`);
    expect(text).not.toContain('Test mode');
    const sandbox = await app.request(`/pay/${await createSession({ amount: '2' })}`);
    expect(sandbox.text).toContain('Test mode — testnets only');
  });

  it('is listed in the full OpenAPI document as an HTML page, not in the integrator one', async () => {
    const full = await app.request('/openapi.json');
    expect(full.body.paths['/pay/{id}'].get.responses['200'].content).toHaveProperty(['text/html']);
    const integrator = await app.request('/openapi/integrator.json');
    expect(integrator.body.paths['/pay/{id}']).toBeUndefined();
  });
});
