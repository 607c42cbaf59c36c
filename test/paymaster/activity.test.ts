import { randomBytes } from 'node:crypto';
import { insertUsageRecord, recordUserOperationReceipt, type NewUsageRecord } from '../../db/paymasterUsage';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import { type TestApp, startTestApp } from '../harness/app';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';

/**
 * The dashboard's paymaster activity: overview figures per window, recent operations, and the
 * cursor-paged feed with its filters and limits, each scoped to the signed-in merchant. Rows are
 * written through the usage repository (as the RPC and the receipt tracker write them).
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

const randomHash = () => `0x${randomBytes(32).toString('hex')}`;
const TARGET = '0x1111111111111111111111111111111111111111';

function signedOp(merchant: SignedInMerchant, overrides: Partial<NewUsageRecord> = {}): NewUsageRecord {
  return {
    merchantId: merchant.merchantId,
    clientId: 'pmc_test_activity',
    method: 'pm_getPaymasterData',
    chainId: 84532,
    mode: 'sponsored',
    status: 'submitted',
    reason: null,
    sender: '0x2222222222222222222222222222222222222222',
    entryPoint: ENTRY_POINT_V07_ADDRESS.toLowerCase(),
    userOpHash: randomHash(),
    targets: [TARGET],
    validUntil: new Date(Date.now() + 600_000),
    ...overrides,
  };
}

function denial(merchant: SignedInMerchant, overrides: Partial<NewUsageRecord> = {}): NewUsageRecord {
  return signedOp(merchant, {
    status: 'denied_target',
    reason: 'target_not_allowed',
    userOpHash: null,
    validUntil: null,
    ...overrides,
  });
}

/** A signed operation that the tracker saw included, with its figures. */
async function includedOp(
  merchant: SignedInMerchant,
  { success, gasCost, ...overrides }: Partial<NewUsageRecord> & { success: boolean; gasCost: bigint },
) {
  const row = await insertUsageRecord(app.db, signedOp(merchant, overrides));
  await recordUserOperationReceipt(app.db, {
    chainId: row.chain_id!,
    entryPoint: row.entry_point!,
    userOpHash: row.user_op_hash!,
    success,
    actualGasCost: gasCost,
    actualGasUsed: 150_000n,
    txHash: randomHash(),
    blockNumber: 42n,
  });
  return row;
}

const get = (merchant: SignedInMerchant, path: string) =>
  app.request(`/v1/merchants/me/paymaster${path}`, { headers: merchant.auth });

describe('GET /v1/merchants/me/paymaster/overview', () => {
  let merchant: SignedInMerchant;
  // Larger than 2^53 so a float anywhere on the way would show.
  const bigGas = 9_007_199_254_740_993_123n;

  beforeAll(async () => {
    merchant = await signInNewMerchant(app);
    await includedOp(merchant, { success: true, gasCost: bigGas });
    await includedOp(merchant, { success: false, gasCost: 7n });
    await includedOp(merchant, { success: true, gasCost: 1_000n, mode: 'user_paid' });
    await insertUsageRecord(app.db, signedOp(merchant));
    await insertUsageRecord(app.db, signedOp(merchant, { status: 'dropped', mode: 'user_paid' }));
    await insertUsageRecord(app.db, denial(merchant));
    await insertUsageRecord(app.db, denial(merchant, { status: 'denied_chain', chainId: null, mode: null }));
    // Three days old: inside 7d and 30d, outside 24h.
    const old = await includedOp(merchant, { success: true, gasCost: 5n });
    await app.db
      .updateTable('paymaster_usage')
      .set({ created_at: new Date(Date.now() - 3 * 24 * 3600 * 1000) } as never)
      .where('id', '=', old.id)
      .execute();
  });

  it('counts the last 24 hours per status group and mode, gas in wei as exact decimal strings', async () => {
    const response = await get(merchant, '/overview');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      window: '24h',
      since: expect.any(String),
      counts: { total: 7, denied: 2, submitted: 1, succeeded: 2, reverted: 1, dropped: 1 },
      sponsored: { operations: 3, gasSpentWei: (bigGas + 7n).toString() },
      userPaid: { operations: 2, gasSpentWei: '1000' },
      gasSpentWei: (bigGas + 7n + 1_000n).toString(),
      malformedRequests: { total: 0, byClient: [] },
      originDenials: { total: 0, byClient: [] },
    });
    const since = Date.parse(response.body.since);
    expect(Math.abs(since - (Date.now() - 24 * 3600 * 1000))).toBeLessThan(60_000);
  });

  it('widens to 7d, 30d and all; an unknown window falls back to 24h', async () => {
    for (const window of ['7d', '30d', 'all']) {
      const response = await get(merchant, `/overview?window=${window}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        window,
        counts: { total: 8, succeeded: 3 },
        sponsored: { operations: 4, gasSpentWei: (bigGas + 12n).toString() },
      });
    }
    expect((await get(merchant, '/overview?window=all')).body.since).toBeNull();
    for (const window of ['1y', '', 'ALL']) {
      const response = await get(merchant, `/overview?window=${window}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ window: '24h', counts: { total: 7 } });
    }
  });

  it("shows a merchant without usage zeros, never another merchant's figures", async () => {
    const stranger = await signInNewMerchant(app);
    const response = await get(stranger, '/overview?window=all');
    expect(response.body).toEqual({
      window: 'all',
      since: null,
      counts: { total: 0, denied: 0, submitted: 0, succeeded: 0, reverted: 0, dropped: 0 },
      sponsored: { operations: 0, gasSpentWei: '0' },
      userPaid: { operations: 0, gasSpentWei: '0' },
      gasSpentWei: '0',
      malformedRequests: { total: 0, byClient: [] },
      originDenials: { total: 0, byClient: [] },
    });
  });
});

describe('GET /v1/merchants/me/paymaster/overview/recent-ops', () => {
  let merchant: SignedInMerchant;
  const hashes: string[] = [];

  beforeAll(async () => {
    merchant = await signInNewMerchant(app);
    for (let index = 0; index < 25; index += 1) {
      const row = await insertUsageRecord(app.db, signedOp(merchant));
      hashes.unshift(row.user_op_hash!);
      await insertUsageRecord(app.db, denial(merchant));
    }
    const included = await includedOp(merchant, { success: true, gasCost: 123n });
    hashes.unshift(included.user_op_hash!);
  });

  it('lists the 20 newest signed operations by default, with their receipt figures, and no denials', async () => {
    const response = await get(merchant, '/overview/recent-ops');
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(20);
    expect(response.body.map((op: { userOpHash: string }) => op.userOpHash)).toEqual(hashes.slice(0, 20));
    expect(response.body[0]).toEqual({
      id: expect.any(String),
      clientId: 'pmc_test_activity',
      method: 'pm_getPaymasterData',
      chainId: 84532,
      mode: 'sponsored',
      status: 'onchain_success',
      reason: null,
      sender: '0x2222222222222222222222222222222222222222',
      entryPoint: ENTRY_POINT_V07_ADDRESS,
      userOpHash: hashes[0],
      targets: [TARGET],
      validUntil: expect.any(String),
      actualGasCost: '123',
      actualGasUsed: '150000',
      usdSnapshot: null,
      policyId: null,
      txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      blockNumber: '42',
      createdAt: expect.any(String),
    });
  });

  it('takes limit 1 to 100', async () => {
    expect((await get(merchant, '/overview/recent-ops?limit=1')).body).toHaveLength(1);
    expect((await get(merchant, '/overview/recent-ops?limit=100')).body).toHaveLength(26);
    for (const limit of ['0', '101', '-1', '2.5', 'ten']) {
      const response = await get(merchant, `/overview/recent-ops?limit=${limit}`);
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/^Validation failed: limit/);
    }
  });

  it("never shows another merchant's operations", async () => {
    const stranger = await signInNewMerchant(app);
    expect((await get(stranger, '/overview/recent-ops?limit=100')).body).toEqual([]);
  });
});

describe('GET /v1/merchants/me/paymaster/activity', () => {
  let merchant: SignedInMerchant;
  /** Every row of the merchant, newest first. */
  let ids: string[];

  beforeAll(async () => {
    merchant = await signInNewMerchant(app);
    await insertUsageRecord(app.db, denial(merchant));
    await insertUsageRecord(app.db, signedOp(merchant, { chainId: 421614 }));
    await includedOp(merchant, { success: true, gasCost: 10n, mode: 'user_paid' });
    await includedOp(merchant, { success: false, gasCost: 11n });
    await insertUsageRecord(app.db, signedOp(merchant, { status: 'dropped' }));
    await insertUsageRecord(app.db, denial(merchant, { status: 'denied_chain', chainId: null, mode: null }));
    await insertUsageRecord(app.db, signedOp(merchant));
    const all = await get(merchant, '/activity?limit=200');
    ids = all.body.data.map((item: { id: string }) => item.id);
  });

  it('returns every usage row newest first, 50 by default, as { data, nextCursor }', async () => {
    const response = await get(merchant, '/activity');
    expect(response.status).toBe(200);
    expect(ids).toHaveLength(7);
    expect(response.body.data.map((item: { id: string }) => item.id)).toEqual(ids);
    expect(response.body.nextCursor).toBeNull();
    expect(response.body.data.map((item: { status: string }) => item.status)).toEqual([
      'submitted',
      'denied_chain',
      'dropped',
      'onchain_reverted',
      'onchain_success',
      'submitted',
      'denied_target',
    ]);
    expect(response.body.data[3]).toMatchObject({
      actualGasCost: '11',
      actualGasUsed: '150000',
      blockNumber: '42',
    });
    expect(response.body.data[1]).toMatchObject({
      chainId: null,
      mode: null,
      userOpHash: null,
      validUntil: null,
    });
  });

  it('pages with the previous nextCursor, stable while new rows arrive', async () => {
    const first = await get(merchant, '/activity?limit=3');
    expect(first.body.data.map((item: { id: string }) => item.id)).toEqual(ids.slice(0, 3));
    expect(first.body.nextCursor).toEqual(expect.any(String));

    const arrived = await insertUsageRecord(app.db, signedOp(merchant));
    const second = await get(merchant, `/activity?limit=3&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((item: { id: string }) => item.id)).toEqual(ids.slice(3, 6));
    const third = await get(merchant, `/activity?limit=3&cursor=${second.body.nextCursor}`);
    expect(third.body.data.map((item: { id: string }) => item.id)).toEqual(ids.slice(6));
    expect(third.body.nextCursor).toBeNull();

    // The new row shows at the top of a fresh first page.
    expect((await get(merchant, '/activity?limit=1')).body.data[0].id).toBe(arrived.id);
  });

  it('filters by mode, chainId and status, together with paging', async () => {
    const items = async (query: string) =>
      (await get(merchant, `/activity?limit=200&${query}`)).body.data as {
        mode: string;
        chainId: number;
        status: string;
      }[];
    expect((await items('mode=user_paid')).map((item) => item.status)).toEqual(['onchain_success']);
    expect((await items('chainId=421614')).map((item) => item.status)).toEqual(['submitted']);
    expect((await items('status=onchain_reverted')).map((item) => item.mode)).toEqual(['sponsored']);
    const sponsoredOnBase = await items('mode=sponsored&chainId=84532&status=submitted');
    expect(sponsoredOnBase.length).toBeGreaterThanOrEqual(1);
    expect(sponsoredOnBase.every((item) => item.chainId === 84532 && item.mode === 'sponsored')).toBe(true);

    const page = await get(merchant, '/activity?limit=1&status=denied_target');
    expect(page.body.data).toHaveLength(1);
    expect(page.body.nextCursor).toBeNull();
  });

  it('answers 400 to a limit outside 1..200, a foreign cursor, or an unknown mode or status', async () => {
    expect((await get(merchant, '/activity?limit=200')).status).toBe(200);
    expect((await get(merchant, '/activity?limit=1')).status).toBe(200);
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=x',
      'cursor=nonsense',
      'mode=free',
      'status=lost',
      'chainId=-1',
    ]) {
      const response = await get(merchant, `/activity?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/^Validation failed: /);
    }
  });

  it("keeps merchants apart: another merchant's feed and cursors show none of these rows", async () => {
    const stranger = await signInNewMerchant(app);
    const own = await insertUsageRecord(app.db, denial(stranger));
    const feed = await get(stranger, '/activity?limit=200');
    expect(feed.body.data.map((item: { id: string }) => item.id)).toEqual([own.id]);

    // A cursor taken from this merchant's feed pages the stranger's own rows only.
    const cursor = (await get(merchant, '/activity?limit=1')).body.nextCursor;
    const paged = await get(stranger, `/activity?limit=200&cursor=${cursor}`);
    expect(paged.status).toBe(200);
    expect(paged.body.data.every((item: { id: string }) => item.id === own.id)).toBe(true);
    expect(paged.body.data.some((item: { id: string }) => ids.includes(item.id))).toBe(false);
  });

  it('requires the dashboard JWT', async () => {
    for (const path of ['/activity', '/overview', '/overview/recent-ops']) {
      expect((await app.request(`/v1/merchants/me/paymaster${path}`)).status).toBe(401);
    }
  });
});
