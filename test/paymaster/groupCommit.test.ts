import { startTestApp, type TestApp } from '../harness/app';
import { signedRecordingStats } from '../../db/paymasterUsage';
import { paymasterRpc } from './paymasterApi';
import {
  freshSender,
  OP_CHARGED_USD_MICRO,
  merchantSponsoringTarget,
  signedDataRequest,
  usd,
} from './signedDataRequests';

/**
 * Issue 46: the api group-commits the recordings of concurrent signed answers (db/groupCommit.ts,
 * migration 2026_11_30_0100). Requests from many senders racing for one merchant-wide limit are
 * recorded in batches, and still exactly the limit's worth is signed; every other request gets SPEC's
 * JSON-RPC refusal and its usage row (db/groupCommit.test.ts has the batch's own cases).
 */

const CHAIN_ID = 84532;
const REQUESTS = 60;
const ADMITTED = 7;

let app: TestApp;
beforeAll(async () => {
  const clock = new Date('2031-03-02T12:00:00.000Z');
  app = await startTestApp({ LOG_LEVEL: 'warn' }, { now: () => clock });
});
afterAll(() => app?.close());

describe('group commit of signed answers', () => {
  it(`${REQUESTS} simultaneous pm_getPaymasterData from ${REQUESTS} senders against a merchant daily cap worth ${ADMITTED}: recorded in batches, exactly ${ADMITTED} signed, the rest -32600 paymaster_spend_cap_exceeded`, async () => {
    const { merchant, clientId } = await merchantSponsoringTarget(app, CHAIN_ID);
    const patch = await app.request('/v1/paymaster/limits', {
      method: 'PATCH',
      headers: merchant.auth,
      json: { perMerchantDailyUsd: usd(BigInt(ADMITTED) * OP_CHARGED_USD_MICRO) },
    });
    expect(patch.status).toBe(200);
    const before = signedRecordingStats(app.db)?.batchedItems ?? 0;

    const responses = await Promise.all(
      Array.from({ length: REQUESTS }, (_, index) =>
        paymasterRpc(
          app,
          clientId,
          signedDataRequest({ id: index, sender: freshSender(), chainId: CHAIN_ID }),
        ),
      ),
    );

    expect(responses.every((response) => response.status === 200)).toBe(true);
    const signed = responses.filter((response) => response.body.result !== undefined);
    const refused = responses.filter((response) => response.body.error !== undefined);
    expect(signed).toHaveLength(ADMITTED);
    expect(refused).toHaveLength(REQUESTS - ADMITTED);
    for (const response of refused) {
      expect(response.body.error).toEqual({
        code: -32600,
        message: expect.stringMatching(
          /^Policy denied: paymaster_spend_cap_exceeded: the merchant reached its daily sponsorship cap/,
        ),
      });
    }
    // Some of the recordings went to Postgres together (the first request of a quiet moment goes alone).
    expect(signedRecordingStats(app.db)!.batchedItems - before).toBeGreaterThan(1);
    const rows = await app.db
      .selectFrom('paymaster_usage')
      .select(['status'])
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
    const counts: Record<string, number> = {};
    for (const { status } of rows) counts[status] = (counts[status] ?? 0) + 1;
    expect(counts).toEqual({ submitted: ADMITTED, denied_spend_cap: REQUESTS - ADMITTED });
  });
});
