import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';

/**
 * Bad input always gets a 4xx with the framework error body, never a 500: regressions of inputs that
 * once reached the database or a conversion unchecked.
 */
describe('bad input answers 4xx, never 500', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  beforeAll(async () => {
    app = await startTestApp();
    merchant = await signInNewMerchant(app);
  });
  afterAll(() => app.close());

  it.each([
    [{ perSenderDailyUsd: 'abc' }, 'perSenderDailyUsd: must be a decimal USD string'],
    [{ perTxUsd: '1e9' }, 'perTxUsd: must be a decimal USD string'],
    [{ perTxUsd: '' }, 'perTxUsd: must be a decimal USD string'],
    [{ perSenderDailyUsd: '12345678901' }, 'perSenderDailyUsd: must be a decimal USD string'],
  ])('PATCH /v1/paymaster/limits with %j answers 400', async (json, message) => {
    const response = await app.request('/v1/paymaster/limits', {
      method: 'PATCH',
      headers: merchant.auth,
      json,
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(response.body.message).toContain(message);
  });

  it.each([
    ['/v1/merchants/me/sessions?page=1000000000000', 'page: must be an integer from 1 to 1000000'],
    ['/v1/merchants/me/sessions?page=99999999999999999999999', 'page'],
    ['/v1/paymaster/usage?chainId=99999999999', 'chainId: must be at most 2147483647'],
    ['/v1/merchants/me/paymaster/activity?chainId=1e400', 'chainId'],
    ['/v1/merchants/me/balance/charges?chainId=4294967296', 'chainId: must be at most 2147483647'],
  ])('GET %s answers 400', async (path, message) => {
    const response = await app.request(path, { headers: merchant.auth });
    expect(response.status).toBe(400);
    expect(response.body.message).toContain(message);
  });

  it('the last page allowed is simply empty', async () => {
    const response = await app.request('/v1/merchants/me/sessions?page=1000000', { headers: merchant.auth });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ data: [], page: 1000000 });
  });
});
