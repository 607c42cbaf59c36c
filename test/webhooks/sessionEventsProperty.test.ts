import fc from 'fast-check';
import type { Address } from 'viem';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { LocalSwapRouter } from '../../contracts/artifacts';
import {
  payDeposit,
  startSettlementStack,
  testChainClient,
  type SettlementStack,
} from '../settlement/settlementStack';
import { SESSION_EVENT_TYPES } from '../../webhooks/events';
import { startWebhookReceiver, type WebhookReceiver } from './receiver';

/**
 * Property (issue 29): over random sequences of deposits (on time, partial, late, after completion; some
 * settled while the swap quotes too low, so the settlement fails), expiry, worker restarts (also in the middle of a settlement) and retry-forwarder calls, on a real chain,
 * the real worker, monitors and receiver — every session's events form a sequence the lifecycle allows
 * (each type at most once except session.failed, never a second session.confirming, nothing after
 * session.completed), agree with the session's final status, and every stored event reaches the
 * endpoint while nothing else does.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;
/** How long each session lives: long enough for a deposit or two on time, short enough to expire in the run. */
const LIFETIME_MS = 12_000;

type Step =
  | { kind: 'deposit'; percent: number; restartWorkers: boolean; swapBroken: boolean }
  | { kind: 'expire' }
  | { kind: 'retry' }
  | { kind: 'restart' };

const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('deposit' as const),
        percent: fc.constantFrom(30, 60, 100, 120),
        restartWorkers: fc.boolean(),
        // The swap quotes below the slippage allowed while this deposit settles: its settlement fails.
        swapBroken: fc.boolean(),
      }),
    },
    { weight: 2, arbitrary: fc.constant({ kind: 'expire' as const }) },
    { weight: 2, arbitrary: fc.constant({ kind: 'retry' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
  ),
  { minLength: 1, maxLength: 4 },
);

/** Payment outcomes (issue 41): told beside the lifecycle, not status changes of their own. */
const OUTCOME_TYPES = ['session.overpaid', 'session.paid_late'];

/**
 * The outcomes' rule: session.overpaid at most once, and only with session.completed (stored in its
 * transaction); session.paid_late once per late deposit, at any point. Returns what breaks it, or null.
 */
function outcomeViolation(types: string[]): string | null {
  const overpaid = types.filter((type) => type === 'session.overpaid').length;
  if (overpaid > 1) return 'a second session.overpaid';
  if (overpaid === 1 && !types.includes('session.completed'))
    return 'session.overpaid without session.completed';
  return null;
}

/** The lifecycle's rule for one session's events, in order; returns what breaks it, or null. */
function lifecycleViolation(all: string[]): string | null {
  const outcome = outcomeViolation(all);
  if (outcome) return outcome;
  const types = all.filter((type) => !OUTCOME_TYPES.includes(type));
  const seen = new Set<string>();
  for (const [index, type] of types.entries()) {
    if (seen.has('session.completed')) return `${type} after session.completed`;
    if (type !== 'session.failed' && seen.has(type)) return `a second ${type}`;
    if ((type === 'session.expired' || type === 'session.underpaid') && index !== 0)
      return `${type} after ${types[index - 1]}`;
    // A session is confirmed once, from awaiting_payment or (paid in full late) from expired.
    const ended = (earlier: string) => earlier === 'session.expired' || earlier === 'session.underpaid';
    if (type === 'session.confirming' && ![...seen].every(ended))
      return 'session.confirming after the session moved on';
    if ((type === 'session.failed' || type === 'session.completed') && !seen.has('session.confirming'))
      return `${type} without session.confirming`;
    seen.add(type);
  }
  return null;
}

describe('session events property: prefix-consistent, at most once, never a second session.confirming', () => {
  let stack: SettlementStack;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    stack = await startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA] });
    receiver = await startWebhookReceiver();
    const endpoint = await stack.app.request('/v1/webhooks', {
      method: 'POST',
      headers: stack.sk,
      json: { url: `${receiver.baseUrl}/hooks`, events: [...SESSION_EVENT_TYPES] },
    });
    expect(endpoint.status).toBe(201);
  }, 300_000);
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  it('the lifecycle rule itself accepts the allowed sequences and refuses the others', () => {
    for (const allowed of [
      [],
      ['session.expired'],
      ['session.underpaid', 'session.confirming', 'session.completed'],
      ['session.confirming', 'session.failed', 'session.failed', 'session.completed'],
      ['session.expired', 'session.confirming', 'session.failed'],
      ['session.confirming', 'session.completed', 'session.overpaid'],
      ['session.expired', 'session.paid_late', 'session.paid_late'],
    ])
      expect(lifecycleViolation(allowed)).toBeNull();
    for (const refused of [
      ['session.confirming', 'session.confirming'],
      ['session.confirming', 'session.completed', 'session.failed'],
      ['session.confirming', 'session.expired'],
      ['session.completed'],
      ['session.expired', 'session.underpaid'],
      ['session.confirming', 'session.failed', 'session.confirming'],
      ['session.confirming', 'session.overpaid'],
      ['session.confirming', 'session.completed', 'session.overpaid', 'session.overpaid'],
    ])
      expect(lifecycleViolation(refused)).not.toBeNull();
  });

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  async function waitUntil(check: () => Promise<boolean>, what: string, ms = 90_000) {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
      await sleep(200);
    }
  }
  const sessionRow = (id: string) =>
    stack.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const workflowRunning = async (id: string) =>
    (await stack.temporal.workflow.getHandle(`session-${id}`).describe()).status.name === 'RUNNING';
  const chain = () => stack.chain(ETHEREUM_SEPOLIA);
  /** The local swap router's USDC → USDe rate (1e30 is parity for 6 → 18 decimals). */
  const PAR = 10n ** 30n;
  async function setUsdcRate(rateE18: bigint) {
    const contracts = stack.contracts(ETHEREUM_SEPOLIA);
    const owner = testChainClient(
      stack.rpcUrls[ETHEREUM_SEPOLIA]!,
      ETHEREUM_SEPOLIA,
      ANVIL_DEV_ACCOUNTS[0].privateKey,
    );
    const hash = await owner.writeContract({
      address: contracts.swapRouter!,
      abi: LocalSwapRouter.abi,
      functionName: 'setRate',
      args: [contracts.usdc!, contracts.usde!, rateE18],
    });
    await owner.waitForTransactionReceipt({ hash });
  }
  const restartWorkers = async () => {
    await stack.stopWorkers();
    await stack.startWorkers();
  };

  /** No settlement in flight: not confirming or bridging, and a settling run has ended. */
  async function quiet(id: string) {
    await waitUntil(async () => {
      const { status } = await sessionRow(id);
      if (status === 'confirming' || status === 'bridging') return false;
      return status === 'awaiting_payment' || status === 'failed' || !(await workflowRunning(id));
    }, `session ${id} to settle down`);
  }

  /** A session that expires LIFETIME_MS from now by the chain's clock (the API's clock is shifted). */
  async function createShortLivedSession() {
    const chainNowMs = Number((await chain().getBlock()).timestamp) * 1000;
    const offsetMs = chainNowMs - Date.now() - (60_000 - LIFETIME_MS);
    const app = await stack.startApp({ now: () => new Date(Date.now() + offsetMs) });
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '4', sandboxMode: true, expiresInSec: 60 },
    });
    expect(created.status).toBe(201);
    const read = await stack.app.request(`/v1/sessions/${created.body.id}`);
    const option = (
      read.body.paymentOptions as Array<{
        chainId: number;
        symbol: string;
        tokenAddress: Address;
        depositAddress: Address;
        amount: string;
      }>
    ).find((candidate) => candidate.chainId === ETHEREUM_SEPOLIA && candidate.symbol === 'USDC')!;
    // Wall time at which the chain passes expiresAt.
    const expiresAtWallMs = Date.parse(created.body.expiresAt) - (chainNowMs - Date.now());
    return { id: created.body.id as string, option, expiresAtWallMs };
  }

  async function pastExpiry(id: string, expiresAtWallMs: number) {
    await sleep(Math.max(0, expiresAtWallMs - Date.now()) + 1_000);
    await chain().mine({ blocks: CONFIRMATIONS + 1 });
    // The workflow decides (expired, underpaid, or paid in time after all) once the monitor is past expiry.
    await waitUntil(
      async () => (await sessionRow(id)).status !== 'awaiting_payment' || !(await workflowRunning(id)),
      `session ${id} to leave awaiting_payment after expiry`,
    );
    await quiet(id);
  }

  it('holds for random deposits, expiries, restarts and retries', async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (scenario) => {
        const { id, option, expiresAtWallMs } = await createShortLivedSession();
        const due = BigInt(option.amount);
        for (const step of scenario) {
          if (step.kind === 'deposit') {
            if (step.swapBroken) await setUsdcRate((PAR * 98n) / 100n);
            await payDeposit(chain(), {
              token: option.tokenAddress,
              to: option.depositAddress,
              amount: (due * BigInt(step.percent)) / 100n,
            });
            await chain().mine({ blocks: CONFIRMATIONS + 1 });
            // A restart while the monitor signals and the settlement runs.
            if (step.restartWorkers) await restartWorkers();
            await sleep(1_500);
            await quiet(id);
            if (step.swapBroken) await setUsdcRate(PAR);
          } else if (step.kind === 'expire') {
            await pastExpiry(id, expiresAtWallMs);
          } else if (step.kind === 'retry') {
            const answered = await stack.app.request(`/v1/merchants/me/sessions/${id}/retry-forwarder`, {
              method: 'POST',
              headers: stack.merchant.auth,
            });
            expect([202, 409]).toContain(answered.status);
            if (answered.status === 202) await quiet(id);
          } else {
            await restartWorkers();
          }
        }
        await pastExpiry(id, expiresAtWallMs);

        const events = await stack.db
          .selectFrom('events')
          .select(['id', 'type', 'payload'])
          .where('session_id', '=', id)
          .orderBy('created_at')
          .execute();
        const allTypes = events.map((event) => event.type);
        expect({ allTypes, violation: lifecycleViolation(allTypes) }).toEqual({ allTypes, violation: null });
        const types = allTypes.filter((type) => !OUTCOME_TYPES.includes(type));

        // The events agree with where the session ended.
        const { status } = await sessionRow(id);
        const last = types.at(-1);
        if (status === 'completed') expect(last).toBe('session.completed');
        if (status === 'failed') expect(last).toBe('session.failed');
        if (status === 'expired')
          expect(types).toEqual([expect.stringMatching(/^session\.(expired|underpaid)$/)]);
        for (const event of events) {
          const body = JSON.parse(event.payload) as {
            id: string;
            type: string;
            data: { session: { id: string } };
          };
          expect(body).toMatchObject({ id: event.id, type: event.type, data: { session: { id } } });
        }

        // Every stored event reaches the endpoint; nothing the database does not hold arrives.
        const stored = new Set(events.map((event) => event.id));
        const arrivedFor = () =>
          new Set(
            receiver.received
              .map(
                (request) =>
                  JSON.parse(request.rawBody) as { id: string; data: { session?: { id: string } } },
              )
              .filter((body) => body.data.session?.id === id)
              .map((body) => body.id),
          );
        await waitUntil(
          async () => [...stored].every((eventId) => arrivedFor().has(eventId)),
          'deliveries',
          60_000,
        );
        expect([...arrivedFor()].sort()).toEqual([...stored].sort());
      }),
      {
        numRuns: 7,
        verbose: true,
        // Always among the runs: underpaid; paid across a restart, then paid again after completion and
        // retried; expired, then paid in full late and retried; a settlement that fails, then is repaired.
        examples: [
          [[{ kind: 'deposit', percent: 100, restartWorkers: false, swapBroken: true }, { kind: 'retry' }]],
          [[{ kind: 'deposit', percent: 30, restartWorkers: false, swapBroken: false }, { kind: 'expire' }]],
          [
            [
              { kind: 'deposit', percent: 100, restartWorkers: true, swapBroken: false },
              { kind: 'deposit', percent: 30, restartWorkers: false, swapBroken: false },
              { kind: 'retry' },
            ],
          ],
          [
            [
              { kind: 'expire' },
              { kind: 'deposit', percent: 120, restartWorkers: false, swapBroken: false },
              { kind: 'retry' },
            ],
          ],
        ],
      },
    );
  }, 900_000);
});
