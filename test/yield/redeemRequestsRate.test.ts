import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { YIELD_CHAIN } from './yieldWorld';

/**
 * Security review III, finding 7 (second half): a redeem-requests page reads up to ten log windows from the
 * chain, and the route had no rate of its own. It now has one per merchant
 * (YIELD_REDEEM_REQUESTS_PER_MERCHANT_PER_MINUTE), shared by every api replica, taken before any work:
 * past it 429 with Retry-After; another merchant is served.
 */
const PER_MINUTE = 5;
const BASE = '/v1/merchants/me/yield-deployments';

describe('redeem-requests rate per merchant', () => {
  let app: TestApp;
  let alice: SignedInMerchant;
  let bob: SignedInMerchant;
  beforeAll(async () => {
    app = await startTestApp({ YIELD_REDEEM_REQUESTS_PER_MERCHANT_PER_MINUTE: String(PER_MINUTE) });
    [alice, bob] = await Promise.all([signInNewMerchant(app), signInNewMerchant(app)]);
  });
  afterAll(() => app?.close());

  const draftOf = async (merchant: SignedInMerchant) => {
    const created = await app.request(BASE, {
      method: 'POST',
      headers: merchant.auth,
      json: { name: 'Rate Savings', chainId: YIELD_CHAIN },
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const redeemRequests = (merchant: SignedInMerchant, id: string) =>
    app.request(`${BASE}/${id}/redeem-requests`, { headers: merchant.auth });

  it('the redeem-requests route has a per-merchant rate (security review III, finding 7)', async () => {
    const [aliceDraft, otherAliceDraft, bobDraft] = await Promise.all([
      draftOf(alice),
      draftOf(alice),
      draftOf(bob),
    ]);
    for (let request = 0; request < PER_MINUTE; request++) {
      const page = await redeemRequests(alice, request % 2 ? aliceDraft : otherAliceDraft);
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({ data: [], nextCursor: null });
    }
    // One allowance for the merchant, whichever deployment (or unknown id) it reads.
    for (const id of [aliceDraft, otherAliceDraft, randomUUID()]) {
      const refused = await redeemRequests(alice, id);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        statusCode: 429,
        message: expect.stringMatching(
          /^Too many redeem-request reads for this merchant; retry after \d+ s$/,
        ),
        error: 'Too Many Requests',
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // Another merchant has its own.
    expect((await redeemRequests(bob, bobDraft)).status).toBe(200);
  });
});
