import type { Address } from 'viem';
import { ACCOUNTS, type SettlementChain } from '../chain/settlementFixture';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import {
  DAY,
  SEVEN_DAYS,
  USDE,
  claimShares,
  deposit,
  readVault,
  requestRedeem,
  travelTo,
  type AsyncVault,
} from './asyncVaultChain';
import { YIELD_BASE as BASE, startCooldownDeployment } from './cooldownDeployment';
import { YIELD_CHAIN, type YieldWorld } from './yieldWorld';

/**
 * GET /v1/merchants/me/yield-deployments/{id}/redeem-requests on a private chain whose sUSDe has Ethena's
 * seven-day cooldown: a vault deployed through the API, three requests by two holders (one claimed, one
 * claimable, one pending), answered newest first with the chain's figures; paging, by block windows too (1,500
 * empty blocks between two requests, past a page's ten windows of 100); the controller filter; another merchant's id 404; bad input 400.
 */

let world: YieldWorld;
let chain: SettlementChain;
let alice: SignedInMerchant;
let bob: SignedInMerchant;
let deploymentId: string;
let setup: AsyncVault;

const call = (merchant: SignedInMerchant, path: string) =>
  world.app.request(`${BASE}${path}`, { method: 'GET', headers: merchant.auth });

interface Requested {
  requestId: bigint;
  at: bigint;
  shares: bigint;
  assets: bigint;
}
const requests: Record<'first' | 'second' | 'third', Requested> = {} as never;

async function request(actor: 'payer' | 'attacker', shares: bigint): Promise<Requested> {
  const made = await requestRedeem(setup, actor, shares);
  const [, , assets] = await readVault<[Address, bigint, bigint, bigint]>(setup, 'redeemRequest', [
    made.requestId,
  ]);
  return { ...made, shares, assets };
}

beforeAll(async () => {
  const started = await startCooldownDeployment({ env: { YIELD_REDEEM_SCAN_BLOCKS: '100' } });
  ({ world, chain, deploymentId, vault: setup, merchant: alice } = started);
  bob = await signInNewMerchant(world.app);

  const payerShares = await deposit(setup, 'payer', USDE('30'));
  const attackerShares = await deposit(setup, 'attacker', USDE('20'));
  requests.first = await request('payer', payerShares / 3n);
  // 1,500 empty blocks, in steps of 250: one call for all of them outlasted the RPC timeout on a loaded CI run.
  for (let step = 0; step < 6; step++)
    await chain.publicClient.request({ method: 'anvil_mine', params: ['0xfa'] } as never);
  await travelTo(chain, requests.first.at + BigInt(3 * DAY));
  requests.second = await request('attacker', attackerShares);
  await travelTo(chain, requests.first.at + BigInt(SEVEN_DAYS + 1));
  expect(await claimShares(setup, 'payer', requests.first.shares)).toBe(requests.first.assets);
  requests.third = await request('payer', payerShares - requests.first.shares);
  // t0 + 10 days + 1 s: the second is past its cooldown, the third has about four days to go.
  await travelTo(chain, requests.second.at + BigInt(SEVEN_DAYS + 1));
}, 300_000);

afterAll(async () => {
  await world?.stop();
});

describe('GET /yield-deployments/{id}/redeem-requests', () => {
  it('answers every request newest first: pending with the time left, claimable, claimed', async () => {
    const answered = await call(alice, `/${deploymentId}/redeem-requests`);
    expect(answered.status).toBe(200);
    const { data, chainTime, nextCursor } = answered.body;
    const now = BigInt(Date.parse(chainTime) / 1000);
    expect(now).toBe(requests.second.at + BigInt(SEVEN_DAYS + 1));
    // The first request is more than 1,000 blocks below the newest: the next page holds it.
    expect(data.map((item: { requestId: string }) => item.requestId)).toEqual([
      String(requests.third.requestId),
      String(requests.second.requestId),
    ]);
    const iso = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString();
    expect(data[0]).toEqual({
      vault: setup.vault,
      symbol: 'USDe',
      decimals: 18,
      requestId: String(requests.third.requestId),
      controller: ACCOUNTS.payer.address,
      owner: ACCOUNTS.payer.address,
      requestedShares: String(requests.third.shares),
      requestedAssets: String(requests.third.assets),
      unclaimedShares: String(requests.third.shares),
      unclaimedAssets: String(requests.third.assets),
      status: 'pending',
      requestedAt: iso(requests.third.at),
      claimableAt: iso(requests.third.at + BigInt(SEVEN_DAYS)),
      secondsLeft: Number(requests.third.at + BigInt(SEVEN_DAYS) - now),
      txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      blockNumber: expect.stringMatching(/^\d+$/),
    });
    expect(data[0].secondsLeft).toBeGreaterThan(3 * DAY);
    expect(data[1]).toMatchObject({
      controller: ACCOUNTS.attacker.address,
      requestedShares: String(requests.second.shares),
      requestedAssets: String(requests.second.assets),
      unclaimedAssets: String(requests.second.assets),
      status: 'claimable',
      claimableAt: iso(requests.second.at + BigInt(SEVEN_DAYS)),
      secondsLeft: null,
    });
    expect(nextCursor).toMatch(/^\d+-\d+$/);

    const older = await call(alice, `/${deploymentId}/redeem-requests?cursor=${nextCursor}`);
    expect(older.status).toBe(200);
    expect(older.body.data).toEqual([
      expect.objectContaining({
        requestId: String(requests.first.requestId),
        requestedShares: String(requests.first.shares),
        requestedAssets: String(requests.first.assets),
        unclaimedShares: '0',
        unclaimedAssets: '0',
        status: 'claimed',
        claimableAt: null,
        secondsLeft: null,
        requestedAt: iso(requests.first.at),
      }),
    ]);
    expect(older.body.nextCursor).toBeNull();
  });

  it('pages by limit through the cursor, and filters by controller', async () => {
    const first = await call(alice, `/${deploymentId}/redeem-requests?limit=1`);
    expect(first.body.data.map((item: { requestId: string }) => item.requestId)).toEqual([
      String(requests.third.requestId),
    ]);
    const second = await call(
      alice,
      `/${deploymentId}/redeem-requests?limit=1&cursor=${first.body.nextCursor}`,
    );
    expect(second.body.data.map((item: { requestId: string }) => item.requestId)).toEqual([
      String(requests.second.requestId),
    ]);
    const byController = await call(
      alice,
      `/${deploymentId}/redeem-requests?controller=${ACCOUNTS.attacker.address.toLowerCase()}`,
    );
    expect(byController.status).toBe(200);
    expect(byController.body.data).toEqual([
      expect.objectContaining({ requestId: String(requests.second.requestId), status: 'claimable' }),
    ]);
    // The vault agrees with the answer.
    expect(
      await readVault<bigint>(setup, 'claimableRedeemRequest', [
        requests.second.requestId,
        ACCOUNTS.attacker.address,
      ]),
    ).toBe(requests.second.shares);
    expect(
      await readVault<bigint>(setup, 'pendingRedeemRequest', [
        requests.third.requestId,
        ACCOUNTS.payer.address,
      ]),
    ).toBe(requests.third.shares);
  });

  it("answers 404 for another merchant's deployment and an unknown or malformed id; a draft has none", async () => {
    const foreign = await call(bob, `/${deploymentId}/redeem-requests`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.message).toBe('Yield deployment not found');
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect((await call(alice, `/${id}/redeem-requests`)).status).toBe(404);
    }
    const draft = await world.app.request(BASE, {
      method: 'POST',
      headers: bob.auth,
      json: { name: 'Not yet', chainId: YIELD_CHAIN },
    });
    const empty = await call(bob, `/${draft.body.id}/redeem-requests`);
    expect([empty.status, empty.body.data, empty.body.nextCursor]).toEqual([200, [], null]);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: [string, RegExp][] = [
      [`/${deploymentId}/redeem-requests?limit=0`, /limit: must be an integer from 1 to 50/],
      [`/${deploymentId}/redeem-requests?limit=51`, /limit: must be an integer from 1 to 50/],
      [`/${deploymentId}/redeem-requests?limit=two`, /limit: must be an integer from 1 to 50/],
      [`/${deploymentId}/redeem-requests?cursor=latest`, /cursor: must be a previous page's nextCursor/],
      [
        `/${deploymentId}/redeem-requests?controller=0x1234`,
        /controller: must be a 0x-prefixed 20-byte address/,
      ],
    ];
    for (const [path, message] of cases) {
      const answered = await call(alice, path);
      expect([path, answered.status]).toEqual([path, 400]);
      expect(answered.body.message).toMatch(/^Validation failed: /);
      expect(answered.body.message).toMatch(message);
    }
    const anonymous = await world.app.request(`${BASE}/${deploymentId}/redeem-requests`, { method: 'GET' });
    expect(anonymous.status).toBe(401);
  });
});
