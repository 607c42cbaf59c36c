import fc from 'fast-check';
import { sql } from 'kysely';
import type { Address } from 'viem';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { payDeposit, startSettlementStack, type SettlementStack } from './settlementStack';

/**
 * Property (issue 12): over random sequences of partial deposits, expiry and retry-forwarder calls, on real
 * chains, the real worker and monitors — the total settled or credited never exceeds the total deposited,
 * and no session is `completed` unless its option amount was covered.
 */
const ETHEREUM = 1;
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS: Record<number, number> = { [ETHEREUM]: 12, [ETHEREUM_SEPOLIA]: 3 };

type Step = { kind: 'deposit'; percent: number } | { kind: 'expire' } | { kind: 'retry' };
interface Scenario {
  topup: boolean;
  amountUsd: number;
  steps: Step[];
}

const scenarios: fc.Arbitrary<Scenario> = fc.record({
  topup: fc.boolean(),
  amountUsd: fc.integer({ min: 2, max: 9 }),
  steps: fc.array(
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant('deposit' as const),
          percent: fc.integer({ min: 5, max: 130 }),
        }),
      },
      { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
      { weight: 2, arbitrary: fc.constant({ kind: 'retry' as const }) },
    ),
    { minLength: 1, maxLength: 4 },
  ),
});

describe('settlement property: settled and credited never exceed deposited; completed only when covered', () => {
  let stack: SettlementStack;
  beforeAll(async () => {
    stack = await startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA, ETHEREUM] });
  }, 180_000);
  afterAll(() => stack?.stop());

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  async function waitUntil(check: () => Promise<boolean>, what: string, ms = 60_000) {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
      await sleep(200);
    }
  }
  const sessionRow = (id: string) =>
    stack.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const depositCount = async (id: string) =>
    (await stack.db.selectFrom('deposits').select('id').where('session_id', '=', id).execute()).length;
  const workflowRunning = async (id: string) =>
    (await stack.temporal.workflow.getHandle(`session-${id}`).describe()).status.name === 'RUNNING';

  async function createSession(merchant: SignedInMerchant, scenario: Scenario): Promise<string> {
    if (scenario.topup) {
      const created = await stack.app.request('/v1/merchants/me/balance/topups', {
        method: 'POST',
        headers: merchant.auth,
        json: { amount: String(scenario.amountUsd) },
      });
      expect(created.status).toBe(201);
      return created.body.sessionId;
    }
    const key = await stack.app.request('/v1/merchants/me/api-keys', {
      method: 'POST',
      headers: merchant.auth,
      json: {},
    });
    const created = await stack.app.request('/v1/sessions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key.body.rawKey}` },
      json: { amount: String(scenario.amountUsd), sandboxMode: true },
    });
    expect(created.status).toBe(201);
    return created.body.id;
  }

  /** Waits until no settlement is in flight: not confirming or bridging, and a retry's run has ended. */
  async function settled(id: string) {
    await waitUntil(
      async () => {
        const { status } = await sessionRow(id);
        if (status === 'confirming' || status === 'bridging') return false;
        return status === 'awaiting_payment' || status === 'failed' || !(await workflowRunning(id));
      },
      `session ${id} to settle down`,
      90_000,
    );
  }

  /** A deposit that completes an open session's payment starts its settlement: wait for that to begin. */
  async function settlementStarted(id: string, due: bigint) {
    const session = await sessionRow(id);
    if (session.status !== 'awaiting_payment') return;
    const accepted = await stack.db
      .selectFrom('deposits')
      .select(sql<string>`coalesce(sum(amount), 0)::text`.as('total'))
      .where('session_id', '=', id)
      .where('kind', '=', 'accepted')
      .executeTakeFirstOrThrow();
    if (BigInt(accepted.total) < due) return;
    await waitUntil(async () => (await sessionRow(id)).status !== 'awaiting_payment', 'settlement start');
  }

  it('holds for random deposits, expiries and retries', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (scenario) => {
        const merchant = await signInNewMerchant(stack.app);
        const chainId = scenario.topup ? ETHEREUM : ETHEREUM_SEPOLIA;
        const id = await createSession(merchant, scenario);
        const option = (
          (await stack.app.request(`/v1/sessions/${id}`)).body.paymentOptions as Array<{
            chainId: number;
            symbol: string;
            tokenAddress: Address;
            depositAddress: Address;
            amount: string;
          }>
        ).find((candidate) => candidate.chainId === chainId && candidate.symbol === 'USDC')!;
        const due = BigInt(option.amount);
        let deposited = 0n;

        for (const step of scenario.steps) {
          if (step.kind === 'deposit') {
            const amount = (due * BigInt(step.percent)) / 100n;
            const before = await depositCount(id);
            await payDeposit(stack.chain(chainId), {
              token: option.tokenAddress,
              to: option.depositAddress,
              amount,
            });
            deposited += amount;
            await stack.chain(chainId).mine({ blocks: CONFIRMATIONS[chainId]! + 1 });
            await waitUntil(async () => (await depositCount(id)) > before, 'deposit detection');
            await settlementStarted(id, due);
            await settled(id);
          } else if (step.kind === 'expire') {
            const { status } = await sessionRow(id);
            if (status !== 'awaiting_payment') continue;
            await stack.temporal.workflow.getHandle(`session-${id}`).terminate('property: expiry');
            await sql`UPDATE sessions SET status = 'expired', expires_at = now() - interval '1 minute' WHERE id = ${id}`.execute(
              stack.db,
            );
          } else {
            const answered = await stack.app.request(`/v1/merchants/me/sessions/${id}/retry-forwarder`, {
              method: 'POST',
              headers: merchant.auth,
            });
            expect([202, 409]).toContain(answered.status);
            if (answered.status === 202) await settled(id);
          }
        }

        const session = await sessionRow(id);
        const flushes = await stack.db
          .selectFrom('settlements')
          .select(['amount_in', 'usde_amount'])
          .where('session_id', '=', id)
          .where('usde_amount', 'is not', null)
          .execute();
        const settledIn = flushes.reduce((sum, row) => sum + BigInt(row.amount_in!), 0n);
        expect(settledIn).toBeLessThanOrEqual(deposited);
        // USDC has 6 decimals: the session's settled USD is the stablecoin swept, exactly.
        expect(BigInt(session.settled_amount.replace('.', ''))).toBe(settledIn);
        if (session.status === 'completed') {
          expect(deposited).toBeGreaterThanOrEqual(due);
          expect(settledIn).toBeGreaterThanOrEqual(due);
        }
        const ledger = await stack.db
          .selectFrom('prepaid_ledger_entries')
          .select(sql<string>`coalesce(sum(amount_usd), 0)::numeric(20,6)::text`.as('credited'))
          .where('merchant_id', '=', merchant.merchantId)
          .executeTakeFirstOrThrow();
        const credited = BigInt(ledger.credited.replace('.', ''));
        if (scenario.topup) expect(credited).toBeLessThanOrEqual(settledIn);
        else expect(credited).toBe(0n);
      }),
      { numRuns: 12, verbose: true },
    );
  }, 900_000);
});
