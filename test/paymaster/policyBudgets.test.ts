import { randomBytes } from 'node:crypto';
import { createPublicClient, http } from 'viem';
import { LOCAL_PAYMASTER_SIGNER } from '../../dev/chains/deployLocalChain';
import { type StartAnvilChainsReturnType, startAnvilChains } from '../../dev/services/anvil';
import { loadConfig } from '../../config';
import { markDroppedOperations } from '../../db/paymasterUsage';
import { creditPrepaidBalance } from '../../db/prepaidLedger';
import { type SignerServer, startSignerServer } from '../../signer/server';
import { startTestApp, type TestApp } from '../harness/app';
import { localContractsAs, writeDeploymentsFile } from '../harness/deployments';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import {
  allowContract,
  createPaymasterClient,
  paymasterRpc,
  usageRows,
  type CreatedClient,
} from './paymasterApi';
import {
  OP_CHARGED_USD_MICRO as CHARGED,
  TARGET,
  freshSender,
  manualClock,
  recordInclusion,
  signedDataRequest,
  usd,
} from './signedDataRequests';

/**
 * Issue 43 item 4: a sponsorship policy's budgets by period are exact under concurrency,
 * as the daily limits are (holds, release, settle on inclusion), first match wins with them, and a
 * period rolls over by the chain's time, never the server clock.
 *
 * Every request is the fixed-gas operation of signedDataRequests.ts: 3.357764 USD charged (markup
 * included) at most. The first group runs on the shared local chain 84532 with the API's clock on days
 * of its own (2033, so the platform's daily budget counter is the file's), which the budgets ignore:
 * they count by the chain's time. The second group runs on a private fork of a local chain served as
 * chain 1, so its time can move and its operations be dropped without touching another file's.
 */

const CHAIN = 84532;
const DAY_MS = 24 * 3600 * 1000;
const ISO = String.raw`\d{4}-\d\d-\d\dT00:00:00\.000Z`;

type Budget = { kind: 'usd' | 'operations'; amount: string; period: string; scope: 'policy' | 'sender' };

const policiesOf = (client: CreatedClient) => `/v1/paymaster/clients/${client.id}/policies`;

async function policiesOfClient(app: TestApp, merchant: SignedInMerchant, client: CreatedClient) {
  const response = await app.request(policiesOf(client), { headers: merchant.auth });
  return response.body.data as { id: string; name: string; budgets: Budget[] }[];
}

async function setBudgets(
  app: TestApp,
  merchant: SignedInMerchant,
  client: CreatedClient,
  policyId: string,
  budgets: Budget[],
) {
  const response = await app.request(`${policiesOf(client)}/${policyId}`, {
    method: 'PATCH',
    headers: merchant.auth,
    json: { budgets },
  });
  if (response.status !== 200) throw new Error(`policy PATCH answered ${response.status}: ${response.text}`);
}

async function addPolicy(app: TestApp, merchant: SignedInMerchant, client: CreatedClient, body: object) {
  const response = await app.request(policiesOf(client), {
    method: 'POST',
    headers: merchant.auth,
    json: body,
  });
  if (response.status !== 201) throw new Error(`policy create answered ${response.status}: ${response.text}`);
  return response.body as { id: string; name: string };
}

/** A budget's counter rows (every period), oldest period first. */
async function budgetCounters(app: TestApp, key: string) {
  const rows = await app.db
    .selectFrom('paymaster_limit_counters')
    .select(['window_start', 'used', 'held'])
    .where('counter_key', '=', key)
    .orderBy('window_start')
    .execute();
  return rows.map((row) => ({
    windowStart: row.window_start,
    used: BigInt(row.used),
    held: BigInt(row.held),
  }));
}

const sign = async (app: TestApp, clientId: string, options: Parameters<typeof signedDataRequest>[0] = {}) =>
  (await paymasterRpc(app, clientId, signedDataRequest({ chainId: CHAIN, ...options }))).body;

const stub = async (app: TestApp, clientId: string, options: Parameters<typeof signedDataRequest>[0] = {}) =>
  (
    await paymasterRpc(
      app,
      clientId,
      signedDataRequest({ method: 'pm_getPaymasterStubData', chainId: CHAIN, ...options }),
    )
  ).body;

describe('policy budgets on the shared chain (the API clock on other days)', () => {
  const opened: TestApp[] = [];
  afterAll(() => Promise.all(opened.map((app) => app.close())));

  /** An app on its own server day, and a merchant whose client's default policy sponsors the target. */
  async function world(day: string, env: Record<string, string> = {}) {
    const clock = manualClock(`${day}T12:00:00.000Z`);
    const app = await startTestApp(
      { LOG_LEVEL: 'warn', PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: '10000', ...env },
      { now: clock.now },
    );
    opened.push(app);
    const merchant = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, merchant);
    await allowContract(app, merchant, CHAIN, TARGET);
    const [defaultPolicy] = await policiesOfClient(app, merchant, client);
    return { app, clock, merchant, client, defaultPolicy: defaultPolicy! };
  }

  it('an operations budget of 3 per week: 3 signed, the 4th refused with a message naming the policy, the period and the amount', async () => {
    const { app, merchant, client, defaultPolicy } = await world('2033-05-10');
    await setBudgets(app, merchant, client, defaultPolicy.id, [
      { kind: 'operations', amount: '3', period: 'week', scope: 'policy' },
    ]);
    for (let index = 0; index < 3; index++) expect((await sign(app, client.clientId)).result).toBeDefined();

    const refusal = new RegExp(
      `^Policy denied: paymaster_rate_limit_exceeded: policy "Default policy" reached its budget of 3 operations per week; the next period starts at ${ISO} by the chain's time$`,
    );
    const refused = await sign(app, client.clientId);
    expect(refused.error).toEqual({ code: -32600, message: expect.stringMatching(refusal) });
    // Stub data reads the same counter: estimation is refused too.
    expect((await stub(app, client.clientId)).error.message).toMatch(refusal);

    const rows = await usageRows(app, merchant);
    expect(rows.map((row) => [row.status, row.reason, row.policyId])).toEqual([
      ['denied_rate_limit', 'policy_budget_operations', defaultPolicy.id],
      ['denied_rate_limit', 'policy_budget_operations', defaultPolicy.id],
      ...Array.from({ length: 3 }, () => ['submitted', null, defaultPolicy.id]),
    ]);
    // One counter for the week (a Monday 00:00 UTC by the chain's time), holding exactly 3.
    const [counter, ...others] = await budgetCounters(
      app,
      `policy_budget:${defaultPolicy.id}:operations:week:policy`,
    );
    expect(others).toEqual([]);
    expect(counter).toMatchObject({ used: 3n, held: 0n });
    expect(counter!.windowStart.getUTCDay()).toBe(1);
    expect(counter!.windowStart.getTime() % DAY_MS).toBe(0);
  });

  it('40 concurrent signing requests racing for an operations budget of 10: exactly 10 signed and the counter is 10', async () => {
    const { app, merchant, client, defaultPolicy } = await world('2033-05-11');
    await setBudgets(app, merchant, client, defaultPolicy.id, [
      { kind: 'operations', amount: '10', period: 'month', scope: 'policy' },
    ]);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, id) => sign(app, client.clientId, { id })),
    );
    expect(answers.filter((answer) => answer.result !== undefined)).toHaveLength(10);
    for (const answer of answers.filter((candidate) => candidate.error !== undefined)) {
      expect(answer.error.message).toMatch(
        /^Policy denied: paymaster_rate_limit_exceeded: policy "Default policy" reached its budget of 10 operations per month; /,
      );
    }
    const counters = await budgetCounters(app, `policy_budget:${defaultPolicy.id}:operations:month:policy`);
    expect(counters).toEqual([{ windowStart: expect.any(Date), used: 10n, held: 0n }]);
    expect(counters[0]!.windowStart.getUTCDate()).toBe(1);
    const statuses = (await usageRows(app, merchant)).map((row) => row.status);
    expect(statuses.filter((status) => status === 'submitted')).toHaveLength(10);
    expect(statuses.filter((status) => status === 'denied_rate_limit')).toHaveLength(30);
  });

  it('20 concurrent signing requests racing for a USD budget worth 5 operations: exactly 5 signed and 5 maximum charges held', async () => {
    const { app, merchant, client, defaultPolicy } = await world('2033-05-12');
    await setBudgets(app, merchant, client, defaultPolicy.id, [
      { kind: 'usd', amount: usd(5n * CHARGED), period: 'lifetime', scope: 'policy' },
    ]);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, id) => sign(app, client.clientId, { id })),
    );
    expect(answers.filter((answer) => answer.result !== undefined)).toHaveLength(5);
    for (const answer of answers.filter((candidate) => candidate.error !== undefined)) {
      expect(answer.error.message).toBe(
        `Policy denied: paymaster_spend_cap_exceeded: policy "Default policy" reached its budget of ${usd(5n * CHARGED)} USD over its lifetime, and what unsent operations hold frees up at their validUntil`,
      );
    }
    expect(await budgetCounters(app, `policy_budget:${defaultPolicy.id}:usd:lifetime:policy`)).toEqual([
      { windowStart: new Date(0), used: 0n, held: 5n * CHARGED },
    ]);
    expect((await usageRows(app, merchant)).filter((row) => row.status === 'denied_spend_cap')).toHaveLength(
      15,
    );
  });

  it('a per-sender USD budget: one sender exhausted is refused, another sender is still sponsored', async () => {
    const { app, merchant, client, defaultPolicy } = await world('2033-05-13');
    await setBudgets(app, merchant, client, defaultPolicy.id, [
      { kind: 'usd', amount: usd(2n * CHARGED), period: 'day', scope: 'sender' },
    ]);
    const spender = freshSender();
    const other = freshSender();
    expect((await sign(app, client.clientId, { sender: spender, nonce: 0 })).result).toBeDefined();
    expect((await sign(app, client.clientId, { sender: spender, nonce: 1 })).result).toBeDefined();
    expect((await sign(app, client.clientId, { sender: spender, nonce: 2 })).error).toEqual({
      code: -32600,
      message: expect.stringMatching(
        new RegExp(
          `^Policy denied: paymaster_spend_cap_exceeded: policy "Default policy" reached its budget of ${usd(2n * CHARGED).replace('.', '\\.')} USD per day for sender ${spender.toLowerCase()}; the next period starts at ${ISO} by the chain's time, and what unsent operations hold frees up at their validUntil$`,
        ),
      ),
    });
    expect((await sign(app, client.clientId, { sender: other })).result).toBeDefined();
    const key = `policy_budget:${defaultPolicy.id}:usd:day:sender`;
    expect(await budgetCounters(app, `${key}:${spender.toLowerCase()}`)).toEqual([
      { windowStart: expect.any(Date), used: 0n, held: 2n * CHARGED },
    ]);
    expect(await budgetCounters(app, `${key}:${other.toLowerCase()}`)).toEqual([
      { windowStart: expect.any(Date), used: 0n, held: CHARGED },
    ]);
  });

  it("policy 1's budget exhausted: policy 2 sponsors and the usage row names policy 2; both exhausted: policy 1's refusal answers", async () => {
    const { app, merchant, client, defaultPolicy } = await world('2033-05-14');
    await setBudgets(app, merchant, client, defaultPolicy.id, [
      { kind: 'operations', amount: '1', period: 'lifetime', scope: 'policy' },
    ]);
    const second = await addPolicy(app, merchant, client, {
      name: 'second',
      allowlist: [{ chainId: CHAIN, contractAddress: TARGET }],
      budgets: [{ kind: 'operations', amount: '1', period: 'lifetime', scope: 'policy' }],
    });
    expect((await sign(app, client.clientId)).result).toBeDefined();
    expect((await usageRows(app, merchant))[0]).toMatchObject({
      status: 'submitted',
      policyId: defaultPolicy.id,
    });

    // Stub data already follows: the first policy is used up, the second has room.
    expect((await stub(app, client.clientId)).result).toBeDefined();
    expect((await sign(app, client.clientId)).result).toBeDefined();
    expect((await usageRows(app, merchant))[0]).toMatchObject({ status: 'submitted', policyId: second.id });

    const refused = await sign(app, client.clientId);
    expect(refused.error.message).toBe(
      'Policy denied: paymaster_rate_limit_exceeded: policy "Default policy" reached its budget of 1 operations over its lifetime',
    );
    expect((await usageRows(app, merchant))[0]).toMatchObject({
      status: 'denied_rate_limit',
      reason: 'policy_budget_operations',
      policyId: defaultPolicy.id,
    });
    for (const policy of [defaultPolicy, second]) {
      expect(await budgetCounters(app, `policy_budget:${policy.id}:operations:lifetime:policy`)).toEqual([
        { windowStart: new Date(0), used: 1n, held: 0n },
      ]);
    }
  });

  it("editing a policy's budgets keeps each budget's count: a budget added before it shifts nothing, a raised amount applies to what the period counted", async () => {
    const { app, merchant, client, defaultPolicy } = await world('2033-05-15');
    const operations: Budget = { kind: 'operations', amount: '2', period: 'lifetime', scope: 'policy' };
    await setBudgets(app, merchant, client, defaultPolicy.id, [operations]);
    expect((await sign(app, client.clientId)).result).toBeDefined();
    expect((await sign(app, client.clientId)).result).toBeDefined();
    const usedUp =
      /^Policy denied: paymaster_rate_limit_exceeded: policy "Default policy" reached its budget of 2 operations over its lifetime$/;
    expect((await sign(app, client.clientId)).error.message).toMatch(usedUp);

    await setBudgets(app, merchant, client, defaultPolicy.id, [
      { kind: 'usd', amount: '1000', period: 'month', scope: 'sender' },
      operations,
    ]);
    expect((await sign(app, client.clientId)).error.message).toMatch(usedUp);

    await setBudgets(app, merchant, client, defaultPolicy.id, [{ ...operations, amount: '3' }]);
    expect((await sign(app, client.clientId)).result).toBeDefined();
    expect((await sign(app, client.clientId)).error.message).toMatch(
      /budget of 3 operations over its lifetime$/,
    );
    expect(await budgetCounters(app, `policy_budget:${defaultPolicy.id}:operations:lifetime:policy`)).toEqual(
      [{ windowStart: new Date(0), used: 3n, held: 0n }],
    );
  });

  it('a chain that cannot be read: a policy with budgets sponsors nothing (upstream error), a policy without budgets never reads it', async () => {
    const { app, merchant, client, defaultPolicy } = await world('2033-05-17', {
      // Nothing listens there: the chain's time (and everything else on it) cannot be read.
      [`RPC_URL_${CHAIN}`]: 'http://127.0.0.1:9',
    });
    expect((await stub(app, client.clientId)).result).toBeDefined();

    await setBudgets(app, merchant, client, defaultPolicy.id, [
      { kind: 'operations', amount: '5', period: 'day', scope: 'policy' },
    ]);
    expect((await stub(app, client.clientId)).error).toEqual({
      code: -32603,
      message: `paymaster_upstream_error: chain ${CHAIN} could not be read for the time policy "Default policy" counts its budgets by; retry later`,
    });
    expect((await usageRows(app, merchant))[0]).toMatchObject({
      status: 'denied_upstream',
      reason: 'policy_budget_chain_unavailable',
    });

    // A later policy without budgets still sponsors (first match wins over what can be checked).
    await addPolicy(app, merchant, client, {
      name: 'plain',
      allowlist: [{ chainId: CHAIN, contractAddress: TARGET }],
    });
    expect((await stub(app, client.clientId)).result).toBeDefined();
  });
});

/**
 * Chain 1 served by a private fork of the stack's first chain (its contracts, feed and paymaster
 * deposit at the same addresses) with a signing service of its own: its time moves forward with
 * evm_setNextBlockTimestamp, and its operations (no other file signs for chain 1) can be dropped.
 */
describe('policy budgets by the chain’s time, on a private chain', () => {
  const PRIVATE_CHAIN = 1;
  let fork: StartAnvilChainsReturnType;
  let signer: SignerServer;
  let appEnv: Record<string, string>;
  const opened: TestApp[] = [];

  beforeAll(async () => {
    const stack = testStack();
    const template = stack.chains[0]!;
    fork = await startAnvilChains({
      chains: [{ chainId: PRIVATE_CHAIN, forkUrl: template.rpcUrl }],
      silent: true,
    });
    const deploymentsFile = writeDeploymentsFile([...stack.chains, ...localContractsAs([PRIVATE_CHAIN])]);
    const rpcUrls = {
      ...Object.fromEntries(stack.chains.map((chain) => [`RPC_URL_${chain.chainId}`, chain.rpcUrl])),
      [`RPC_URL_${PRIVATE_CHAIN}`]: fork.chains[0]!.rpcUrl,
    };
    const sharedSecret = randomBytes(24).toString('hex');
    signer = await startSignerServer({
      config: loadConfig({
        LOG_LEVEL: 'silent',
        SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
        SIGNER_SHARED_SECRET: sharedSecret,
        SIGNER_ERC20_TOKENS: JSON.stringify(stack.signer.erc20Tokens),
        SIGNER_MAX_VALIDITY_SEC: String(10 * 365 * 24 * 3600),
        DEPLOYMENTS_FILE: deploymentsFile,
        ...rpcUrls,
      }),
      port: 0,
    });
    appEnv = {
      LOG_LEVEL: 'warn',
      DEPLOYMENTS_FILE: deploymentsFile,
      ...rpcUrls,
      SIGNER_URL: signer.url,
      SIGNER_SHARED_SECRET: sharedSecret,
      // The feed's answer stays a price while the chain's time moves a day ahead.
      PAYMASTER_PRICE_MAX_AGE_SEC: String(7 * 24 * 3600),
    };
  });
  afterAll(async () => {
    await Promise.all(opened.map((app) => app.close()));
    await signer?.stop();
    await fork?.stop();
  });

  const chainClient = () => createPublicClient({ transport: http(fork.chains[0]!.rpcUrl) });
  const chainTime = async () => new Date(Number((await chainClient().getBlock()).timestamp) * 1000);
  /** The next block carries `at`; one is mined at once. */
  const moveChainTo = async (at: Date) => {
    const client = chainClient();
    await client.request({
      method: 'evm_setNextBlockTimestamp',
      params: [`0x${Math.floor(at.getTime() / 1000).toString(16)}`],
    } as never);
    await client.request({ method: 'evm_mine', params: [] } as never);
  };

  const signOnChain = async (app: TestApp, clientId: string, nonce = 0, method = 'pm_getPaymasterData') =>
    (
      await paymasterRpc(
        app,
        clientId,
        signedDataRequest({ method, chainId: PRIVATE_CHAIN, nonce, sender: freshSender() }),
      )
    ).body;

  /** An app on the private chain with the server clock given, and a live client sponsoring the target there. */
  async function world(clock: ReturnType<typeof manualClock>) {
    const app = await startTestApp(appEnv, { now: clock.now });
    opened.push(app);
    const merchant = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, merchant, {
      environment: 'live',
      allowedChainIds: [PRIVATE_CHAIN],
    });
    await allowContract(app, merchant, PRIVATE_CHAIN, TARGET);
    await creditPrepaidBalance(app.db, {
      merchantId: merchant.merchantId,
      amountUsd: '1000',
      description: 'top-up',
    });
    const [defaultPolicy] = await policiesOfClient(app, merchant, client);
    return { app, merchant, client, defaultPolicy: defaultPolicy! };
  }

  it("rollover by chain time: the chain's next block past the day's end opens the next period while the server clock has not moved; a server clock past it with the chain's time before does not", async () => {
    const clock = manualClock(new Date().toISOString());
    const { app, merchant, client, defaultPolicy } = await world(clock);
    await setBudgets(app, merchant, client, defaultPolicy.id, [
      { kind: 'operations', amount: '2', period: 'day', scope: 'policy' },
    ]);
    const before = await chainTime();
    const dayStart = new Date(Math.floor(before.getTime() / DAY_MS) * DAY_MS);
    const nextDay = new Date(dayStart.getTime() + DAY_MS);
    const refusal = `Policy denied: paymaster_rate_limit_exceeded: policy "Default policy" reached its budget of 2 operations per day; the next period starts at ${nextDay.toISOString()} by the chain's time`;

    expect((await signOnChain(app, client.clientId)).result).toBeDefined();
    expect((await signOnChain(app, client.clientId)).result).toBeDefined();
    expect((await signOnChain(app, client.clientId)).error.message).toBe(refusal);

    // The server clock passes the day's end; the chain's has not: the period is still the old one.
    clock.set(new Date(nextDay.getTime() + 3600_000).toISOString());
    expect((await signOnChain(app, client.clientId)).error.message).toBe(refusal);
    expect((await signOnChain(app, client.clientId, 0, 'pm_getPaymasterStubData')).error.message).toBe(
      refusal,
    );

    // The server clock back before the day's end; the chain's next block is past it: a new period.
    clock.set(new Date().toISOString());
    await moveChainTo(new Date(nextDay.getTime() + 5_000));
    // The API reuses a chain time read for up to a second: wait for the new block's time to be read.
    await expect(
      waitForAnswer(() => signOnChain(app, client.clientId, 0, 'pm_getPaymasterStubData')),
    ).resolves.toBe('result');
    expect(clock.now().getTime()).toBeLessThan(nextDay.getTime());
    expect((await signOnChain(app, client.clientId)).result).toBeDefined();

    expect(await budgetCounters(app, `policy_budget:${defaultPolicy.id}:operations:day:policy`)).toEqual([
      { windowStart: dayStart, used: 2n, held: 0n },
      { windowStart: nextDay, used: 1n, held: 0n },
    ]);
  });

  it("a dropped operation's hold released gives the budget back", async () => {
    const { app, merchant, client, defaultPolicy } = await world(manualClock(new Date().toISOString()));
    await setBudgets(app, merchant, client, defaultPolicy.id, [
      { kind: 'usd', amount: usd(CHARGED), period: 'lifetime', scope: 'policy' },
    ]);
    const key = `policy_budget:${defaultPolicy.id}:usd:lifetime:policy`;
    expect((await signOnChain(app, client.clientId)).result).toBeDefined();
    expect((await signOnChain(app, client.clientId)).error.message).toMatch(
      /^Policy denied: paymaster_spend_cap_exceeded: policy "Default policy" reached its budget of /,
    );
    expect(await budgetCounters(app, key)).toEqual([{ windowStart: new Date(0), used: 0n, held: CHARGED }]);

    // The receipt tracker saw a block past the operation's validUntil without it: dropped, hold released.
    const [signed] = await app.db
      .selectFrom('paymaster_usage')
      .select(['seq', 'valid_until'])
      .where('merchant_id', '=', merchant.merchantId)
      .where('status', '=', 'submitted')
      .execute();
    await markDroppedOperations(app.db, {
      chainId: PRIVATE_CHAIN,
      validBefore: new Date(signed!.valid_until!.getTime() + 1000),
      // The tracker drops the whole chain's; here only this test's rows (other files sign on this chain too).
      merchantId: merchant.merchantId,
    });
    const dropped = await app.db
      .selectFrom('paymaster_usage')
      .select('status')
      .where('seq', '=', signed!.seq)
      .executeTakeFirstOrThrow();
    expect(dropped.status).toBe('dropped');
    expect(await budgetCounters(app, key)).toEqual([{ windowStart: new Date(0), used: 0n, held: 0n }]);
    expect((await signOnChain(app, client.clientId)).result).toBeDefined();
  });

  it('settle on inclusion: the budget counts the actual charge, and what it frees is sponsored again', async () => {
    const { app, merchant, client, defaultPolicy } = await world(manualClock(new Date().toISOString()));
    // Room for one maximum charge and the actual charge of one that used a tenth of its maximum
    // (0.305252 USD of gas; 0.33577632 USD with markup, charged 0.335777).
    const TENTH_CHARGED = 335_777n;
    await setBudgets(app, merchant, client, defaultPolicy.id, [
      { kind: 'usd', amount: usd(CHARGED + TENTH_CHARGED), period: 'month', scope: 'policy' },
    ]);
    const key = `policy_budget:${defaultPolicy.id}:usd:month:policy`;
    expect((await signOnChain(app, client.clientId)).result).toBeDefined();
    expect((await signOnChain(app, client.clientId)).error.message).toMatch(
      /^Policy denied: paymaster_spend_cap_exceeded: /,
    );

    const [signed] = await app.db
      .selectFrom('paymaster_usage')
      .select('user_op_hash')
      .where('merchant_id', '=', merchant.merchantId)
      .where('status', '=', 'submitted')
      .execute();
    await recordInclusion(
      app.db,
      { chainId: PRIVATE_CHAIN, userOpHash: signed!.user_op_hash! },
      app.config.PAYMASTER_MARKUP_BPS,
    );
    const [settled] = await budgetCounters(app, key);
    expect(settled).toMatchObject({ used: TENTH_CHARGED, held: 0n });

    // The actual charge plus one more maximum charge fit exactly; then nothing more.
    expect((await signOnChain(app, client.clientId)).result).toBeDefined();
    expect((await signOnChain(app, client.clientId)).error.message).toMatch(
      /^Policy denied: paymaster_spend_cap_exceeded: /,
    );
    expect(await budgetCounters(app, key)).toEqual([
      { windowStart: settled!.windowStart, used: TENTH_CHARGED, held: CHARGED },
    ]);
  });
});

/** Asks until the answer is a result (or 10 s passed): the chain's new time is read within a second. */
async function waitForAnswer(
  ask: () => Promise<{ result?: unknown; error?: unknown }>,
): Promise<'result' | 'error'> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await ask();
    if (answer.result !== undefined || Date.now() > deadline)
      return answer.result !== undefined ? 'result' : 'error';
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
