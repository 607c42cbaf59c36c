import { randomInt } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { sql } from 'kysely';
import type { Hex } from 'viem';
import { gasChargeMicroUsd } from '../../money/gasPricing';
import { microUsdToFixed6 } from '../../money/microUsd';
import { ethUsdDecimalToAnswer } from '../../money/usdPriceAnswers';
import { creditPrepaidBalance, prepaidBalanceUsd } from '../../db/prepaidLedger';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * Security review III, finding 2: a vault deploy costs the platform's deployer about 2.55M gas, and the
 * per-merchant cap alone bounds nothing (a merchant is a new wallet key). Deploys have a platform-wide
 * budget per chain and UTC day (a count and wei of gas, reserved at queue time and settled at the actual
 * cost), and on a mainnet the deploy's maximum cost is reserved against the merchant's prepaid balance and
 * its actual cost debited from the ledger: no balance, no deploy, and nothing is sent.
 *
 * The API runs on a clock of its own days, so the run's other deploys (shared chains, shared database) never
 * count in these tests' budgets.
 */
const BASE = '/v1/merchants/me/yield-deployments';
const MAINNET = 1;
const CHAIN_DAILY_DEPLOYS = 3;
const GAS_PER_VAULT = 3_000_000n;
const MARKUP_BPS = 1000;

let world: YieldWorld;
const DAY_MS = 24 * 3600_000;
let dayOffsetMs = 0;
/** Moves the API's clock to a UTC day no other test of the run uses. */
const useOwnDay = () => {
  dayOffsetMs = randomInt(3_000, 30_000) * DAY_MS;
};
const now = () => new Date(Date.now() + dayOffsetMs);

beforeAll(async () => {
  useOwnDay();
  world = await startYieldWorld({
    now,
    env: {
      YIELD_DEPLOYS_PER_CHAIN_PER_DAY: String(CHAIN_DAILY_DEPLOYS),
      YIELD_DEPLOY_GAS_PER_VAULT: String(GAS_PER_VAULT),
      PAYMASTER_MARKUP_BPS: String(MARKUP_BPS),
    },
  });
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

const call = (app: TestApp, merchant: SignedInMerchant, method: string, path: string) =>
  app.request(`${BASE}${path}`, { method, headers: merchant.auth });

async function createDraft(merchant: SignedInMerchant, chainId: number, app = world.app): Promise<string> {
  const created = await app.request(BASE, {
    method: 'POST',
    headers: merchant.auth,
    json: { name: `Budget ${randomInt(1_000_000)}`, chainId },
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

const settled = (merchant: SignedInMerchant, id: string) =>
  waitFor(
    async () => (await call(world.app, merchant, 'GET', `/${id}`)).body,
    (body) => body.status !== 'deploying',
  );

/** What one deploy reserves now: the gas bound at the chain's 2 × base fee + priority fee. */
async function reservationWeiNow(chainId: number): Promise<bigint> {
  const client = world.publicClient(chainId);
  const [block, priority] = await Promise.all([
    client.getBlock({ blockTag: 'latest' }),
    client.request({ method: 'eth_maxPriorityFeePerGas' }) as Promise<Hex>,
  ]);
  return GAS_PER_VAULT * (2n * block.baseFeePerGas! + BigInt(priority));
}

/** A TCP server that takes connections and never answers a byte. */
async function startSilentServer(): Promise<{ address: string; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function merchantWithBalance(amountUsd: string): Promise<SignedInMerchant> {
  const merchant = await signInNewMerchant(world.app);
  await creditPrepaidBalance(world.app.db, {
    merchantId: merchant.merchantId,
    amountUsd,
    description: 'test top-up',
  });
  return merchant;
}

async function budgetOf(chainId: number) {
  const row = await world.app.db
    .selectFrom('yield_deploy_budget_counters')
    .select(['deploys', 'wei'])
    .where('chain_id', '=', chainId)
    .where('day', '=', now().toISOString().slice(0, 10))
    .executeTakeFirst();
  return { deploys: row?.deploys ?? 0, wei: BigInt(row?.wei ?? '0') };
}

async function reservedUsdMicro(merchantId: string): Promise<bigint> {
  const { rows } = await sql<{ held: string }>`
    SELECT held::text FROM paymaster_limit_counters WHERE counter_key = ${`prepaid_reserved:${merchantId}`}`.execute(
    world.app.db,
  );
  return BigInt(rows[0]?.held ?? '0');
}

const ledgerOf = (merchantId: string) =>
  world.app.db
    .selectFrom('prepaid_ledger_entries')
    .select(['direction', 'amount_usd', 'reference', 'description'])
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .execute();

const chargesOf = (deploymentId: string) =>
  world.app.db
    .selectFrom('yield_deploy_charges')
    .selectAll()
    .where('deployment_id', '=', deploymentId)
    .orderBy('created_at')
    .execute();

const secondsToNextUtcDay = () =>
  (Math.floor(now().getTime() / DAY_MS) * DAY_MS + DAY_MS - now().getTime()) / 1000;

it('vault deploys have a platform-wide budget per chain and day (security review III, finding 2)', async () => {
  // Merchant A uses up the chain's day; merchants B, C, … (new wallet keys) are refused too.
  const merchants = await Promise.all(
    Array.from({ length: CHAIN_DAILY_DEPLOYS + 3 }, () => signInNewMerchant(world.app)),
  );
  const drafts = await Promise.all(merchants.map((merchant) => createDraft(merchant, YIELD_CHAIN)));
  const answers = await Promise.all(
    merchants.map((merchant, index) => call(world.app, merchant, 'POST', `/${drafts[index]}/deploy`)),
  );
  expect(answers.map((answer) => answer.status).sort()).toEqual([
    ...Array(CHAIN_DAILY_DEPLOYS).fill(202),
    ...Array(3).fill(429),
  ]);
  for (const refused of answers.filter((answer) => answer.status === 429)) {
    expect(refused.body.message).toBe(
      `Too many vault deploys today on chain ${YIELD_CHAIN}: the platform's daily deploy budget is spent; retry after the UTC day ends`,
    );
    expect(Math.abs(Number(refused.headers.get('retry-after')) - secondsToNextUtcDay())).toBeLessThan(60);
  }
  for (const [index, answer] of answers.entries()) {
    const id = drafts[index]!;
    if (answer.status === 429) {
      expect((await call(world.app, merchants[index]!, 'GET', `/${id}`)).body.status).toBe('draft');
      expect(await chargesOf(id)).toEqual([]);
    } else {
      expect((await settled(merchants[index]!, id)).status).toBe('active');
    }
  }
  // The day's wei are the deploys' actual costs (reservations settled), counted once each.
  const budget = await budgetOf(YIELD_CHAIN);
  expect(budget.deploys).toBe(CHAIN_DAILY_DEPLOYS);
  const costs = (
    await world.app.db
      .selectFrom('yield_deploy_charges')
      .select(['cost_wei', 'status'])
      .where('deployment_id', 'in', drafts)
      .execute()
  ).map((charge) => {
    expect(charge.status).toBe('settled');
    return BigInt(charge.cost_wei!);
  });
  expect(costs).toHaveLength(CHAIN_DAILY_DEPLOYS);
  expect(budget.wei).toBe(costs.reduce((sum, cost) => sum + cost, 0n));
}, 240_000);

it('finding 2 — the platform budget counts wei too: concurrent deploys of many merchants never reserve more gas than YIELD_DEPLOY_BUDGET_WEI_PER_CHAIN_PER_DAY', async () => {
  useOwnDay();
  // Room for two reservations at today's fees (and a half, for fee moves between this read and the API's).
  const budgetWei = ((await reservationWeiNow(YIELD_CHAIN)) * 5n) / 2n;
  const app = await startTestApp(
    {
      TEMPORAL_TASK_QUEUE_PREFIX: world.prefix,
      YIELD_DNS_SERVER: world.dns.address,
      YIELD_DEPLOY_GAS_PER_VAULT: String(GAS_PER_VAULT),
      YIELD_DEPLOY_BUDGET_WEI_PER_CHAIN_PER_DAY: budgetWei.toString(),
    },
    { now },
  );
  try {
    const merchants = await Promise.all(Array.from({ length: 6 }, () => signInNewMerchant(app)));
    const drafts = await Promise.all(merchants.map((merchant) => createDraft(merchant, YIELD_CHAIN, app)));
    const answers = await Promise.all(
      merchants.map((merchant, index) => call(app, merchant, 'POST', `/${drafts[index]}/deploy`)),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 202, 429, 429, 429, 429]);
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(refused.body.message).toBe(
      `Too many vault deploys today on chain ${YIELD_CHAIN}: the platform's daily deploy budget is spent; retry after the UTC day ends`,
    );
    const reserved = await app.db
      .selectFrom('yield_deploy_charges')
      .select('reserved_wei')
      .where('deployment_id', 'in', drafts)
      .execute();
    expect(reserved).toHaveLength(2);
    expect(reserved.reduce((sum, row) => sum + BigInt(row.reserved_wei), 0n)).toBeLessThanOrEqual(budgetWei);
    for (const [index, answer] of answers.entries()) {
      if (answer.status === 202)
        expect((await settled(merchants[index]!, drafts[index]!)).status).toBe('active');
    }
  } finally {
    await app.close();
  }
}, 240_000);

describe('finding 2 — on a mainnet the deploy is charged to the merchant’s prepaid balance', () => {
  beforeEach(useOwnDay);

  it('a merchant without a prepaid balance is refused with 402 before anything is sent or counted', async () => {
    const merchant = await signInNewMerchant(world.app);
    const id = await createDraft(merchant, MAINNET);
    const nonceBefore = await world
      .publicClient(MAINNET)
      .getTransactionCount({ address: world.deployerAddress });

    const refused = await call(world.app, merchant, 'POST', `/${id}/deploy`);
    expect(refused.status).toBe(402);
    expect(refused.body.message).toMatch(
      /^Prepaid balance too low for a vault deploy on chain 1: it may cost up to \d+\.\d{6} USD \(markup included\) and 0\.000000 USD is available; top up the prepaid balance and deploy again$/,
    );
    expect((await call(world.app, merchant, 'GET', `/${id}`)).body).toMatchObject({ status: 'draft' });
    expect(await chargesOf(id)).toEqual([]);
    expect(await ledgerOf(merchant.merchantId)).toEqual([]);
    expect(await budgetOf(MAINNET)).toEqual({ deploys: 0, wei: 0n });
    expect(await world.publicClient(MAINNET).getTransactionCount({ address: world.deployerAddress })).toBe(
      nonceBefore,
    );
  }, 120_000);

  it('a deploy reserves its maximum cost and is debited its actual cost (gas used × price paid × ETH/USD, markup included) through the ledger', async () => {
    const merchant = await merchantWithBalance('5000');
    const id = await createDraft(merchant, MAINNET);
    expect((await call(world.app, merchant, 'POST', `/${id}/deploy`)).status).toBe(202);
    const [held] = await chargesOf(id);
    expect(held).toMatchObject({ status: 'held', merchant_id: merchant.merchantId, chain_id: MAINNET });
    expect(await reservedUsdMicro(merchant.merchantId)).toBe(
      BigInt(Math.round(Number(held!.reserved_usd) * 1e6)),
    );

    const active = await settled(merchant, id);
    expect(active.status).toBe('active');
    const [charge] = await chargesOf(id);
    const receipt = await world.publicClient(MAINNET).getTransactionReceipt({ hash: charge!.tx_hash as Hex });
    const costWei = receipt.gasUsed * receipt.effectiveGasPrice;
    // Signed within the bound it was counted and held at.
    const sent = await world.publicClient(MAINNET).getTransaction({ hash: charge!.tx_hash as Hex });
    expect(sent.gas).toBe(BigInt(charge!.gas_limit));
    expect(sent.maxFeePerGas!).toBeLessThanOrEqual(BigInt(charge!.max_fee_per_gas));
    expect(BigInt(charge!.cost_wei!)).toBe(costWei);
    expect(costWei).toBeLessThanOrEqual(BigInt(charge!.reserved_wei));
    const chargedUsd = microUsdToFixed6(
      gasChargeMicroUsd({
        actualGasCostWei: costWei,
        ethUsdAnswer: ethUsdDecimalToAnswer(charge!.eth_usd_price!),
        markupBps: MARKUP_BPS,
      }),
    );
    expect(charge).toMatchObject({ status: 'settled', charged_usd: chargedUsd });
    expect(await ledgerOf(merchant.merchantId)).toEqual([
      expect.objectContaining({ direction: 'credit', amount_usd: '5000.000000' }),
      {
        direction: 'debit',
        amount_usd: chargedUsd,
        reference: `yield-deploy:${charge!.id}`,
        description: `Vault deploy: yield deployment ${id} on chain 1, transaction ${charge!.tx_hash}`,
      },
    ]);
    expect(await reservedUsdMicro(merchant.merchantId)).toBe(0n);
    expect(await budgetOf(MAINNET)).toEqual({ deploys: 1, wei: costWei });
  }, 180_000);

  it('concurrent deploys never reserve more than the prepaid balance: those past it get 402, and the balance never goes negative', async () => {
    const merchant = await signInNewMerchant(world.app);
    const drafts = await Promise.all(Array.from({ length: 5 }, () => createDraft(merchant, MAINNET)));
    // Probe what one deploy reserves now, then fund two and a half of them.
    const probe = await call(world.app, merchant, 'POST', `/${drafts[0]}/deploy`);
    expect(probe.status).toBe(402);
    const perDeploy = Number(/up to (\d+\.\d{6}) USD/.exec(probe.body.message)![1]);
    await creditPrepaidBalance(world.app.db, {
      merchantId: merchant.merchantId,
      amountUsd: (perDeploy * 2.5).toFixed(6),
      description: 'test top-up',
    });

    const answers = await Promise.all(drafts.map((id) => call(world.app, merchant, 'POST', `/${id}/deploy`)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 202, 402, 402, 402]);
    for (const [index, answer] of answers.entries()) {
      if (answer.status === 202) expect((await settled(merchant, drafts[index]!)).status).toBe('active');
      else expect((await call(world.app, merchant, 'GET', `/${drafts[index]}`)).body.status).toBe('draft');
    }
    const balance = await prepaidBalanceUsd(world.app.db, merchant.merchantId);
    expect(Number(balance)).toBeGreaterThanOrEqual(0);
    const debits = (await ledgerOf(merchant.merchantId)).filter((entry) => entry.direction === 'debit');
    expect(debits).toHaveLength(2);
    expect(await reservedUsdMicro(merchant.merchantId)).toBe(0n);
  }, 240_000);

  it('a deploy Temporal does not accept gives back what it took: 503, a draft again, no hold, nothing counted in the day', async () => {
    const merchant = await merchantWithBalance('5000');
    const id = await createDraft(merchant, MAINNET);
    // A Temporal frontend that accepts connections and never answers: the start misses its deadline.
    const silent = await startSilentServer();
    const app = await startTestApp(
      {
        TEMPORAL_ADDRESS: silent.address,
        TEMPORAL_START_TIMEOUT_MS: '1000',
        TEMPORAL_TASK_QUEUE_PREFIX: world.prefix,
      },
      { now },
    );
    try {
      const refused = await call(app, merchant, 'POST', `/${id}/deploy`);
      expect(refused.status).toBe(503);
    } finally {
      await app.close();
      await silent.stop();
    }
    expect((await call(world.app, merchant, 'GET', `/${id}`)).body.status).toBe('draft');
    expect(await chargesOf(id)).toEqual([expect.objectContaining({ status: 'released', cost_wei: '0' })]);
    expect(await reservedUsdMicro(merchant.merchantId)).toBe(0n);
    expect(await prepaidBalanceUsd(world.app.db, merchant.merchantId)).toBe('5000.000000');
    expect(await budgetOf(MAINNET)).toEqual({ deploys: 0, wei: 0n });
    // Asked again, it deploys and is charged once.
    expect((await call(world.app, merchant, 'POST', `/${id}/deploy`)).status).toBe(202);
    expect((await settled(merchant, id)).status).toBe('active');
    expect((await ledgerOf(merchant.merchantId)).filter((entry) => entry.direction === 'debit')).toHaveLength(
      1,
    );
  }, 180_000);

  it('a set that needs more gas than its bound is refused before sending: failed, nothing debited, the hold released', async () => {
    const merchant = await merchantWithBalance('5000');
    const id = await createDraft(merchant, MAINNET);
    const nonceBefore = await world
      .publicClient(MAINNET)
      .getTransactionCount({ address: world.deployerAddress });
    const app = await startTestApp(
      { TEMPORAL_TASK_QUEUE_PREFIX: world.prefix, YIELD_DEPLOY_GAS_PER_VAULT: '500000' },
      { now },
    );
    try {
      expect((await call(app, merchant, 'POST', `/${id}/deploy`)).status).toBe(202);
    } finally {
      await app.close();
    }
    expect(await settled(merchant, id)).toMatchObject({
      status: 'failed',
      failureReason: expect.stringMatching(
        /^deployment refused: it needs \d+ gas, more than the 500000 its charge holds \(YIELD_DEPLOY_GAS_PER_VAULT per vault\)$/,
      ),
    });
    expect(await chargesOf(id)).toEqual([expect.objectContaining({ status: 'released', cost_wei: '0' })]);
    expect(await prepaidBalanceUsd(world.app.db, merchant.merchantId)).toBe('5000.000000');
    expect(await reservedUsdMicro(merchant.merchantId)).toBe(0n);
    expect(await world.publicClient(MAINNET).getTransactionCount({ address: world.deployerAddress })).toBe(
      nonceBefore,
    );
  }, 180_000);

  it('a failed deploy releases what it held: no debit, the balance whole again, its wei out of the day’s budget', async () => {
    const merchant = await merchantWithBalance('5000');
    const id = await createDraft(merchant, MAINNET);
    world.breakStakedVault(MAINNET, true);
    try {
      expect((await call(world.app, merchant, 'POST', `/${id}/deploy`)).status).toBe(202);
      expect((await settled(merchant, id)).status).toBe('failed');
    } finally {
      world.breakStakedVault(MAINNET, false);
    }
    expect(await chargesOf(id)).toEqual([
      expect.objectContaining({ status: 'released', cost_wei: '0', charged_usd: null }),
    ]);
    expect(await ledgerOf(merchant.merchantId)).toHaveLength(1);
    expect(await prepaidBalanceUsd(world.app.db, merchant.merchantId)).toBe('5000.000000');
    expect(await reservedUsdMicro(merchant.merchantId)).toBe(0n);
    expect(await budgetOf(MAINNET)).toEqual({ deploys: 1, wei: 0n });
  }, 180_000);
});
