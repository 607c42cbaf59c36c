import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { sql } from 'kysely';
import { encodeFunctionData, parseAbi, type Address } from 'viem';
import { createSessionReconcilerActivities } from '../../activities/sessionReconciler';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import type { Db } from '../../db/client';
import { startOfUtcHour } from '../../paymaster/limits/limits';
import { sessionWorkflowId } from '../../workflows/workflowIds';
import { depositDetectedSignal } from '../../workflows/paymentSession';
import type { TestResponse } from './app';
import { until } from './projectProcess';
import type { WebhookReceiver } from '../webhooks/receiver';
import { sessionStarterFor } from '../../workflowClient/sessions';

/**
 * The fault tests' steady load (test/hardening/faultsUnderLoad.test.ts, replicasUnderLoad.test.ts):
 * session creations, paymaster `pm_getPaymasterData` calls and deposits, and the invariants that must
 * hold afterwards whatever the faults did.
 */

/** The chain the paymaster calls name (and prices on). */
export const CHAIN_ID = 84532;
/** The contract every sponsored operation calls (the merchant allows it). */
export const TARGET: Address = '0x1000000000000000000000000000000000000001';
/** The merchant's per-sender hourly operation limit; each sender is asked OPS_PER_SENDER times. */
export const SENDER_HOURLY_OPS = 3;
export const OPS_PER_SENDER = 4;

export interface Tally {
  sent: number;
  failed: number;
  /** What the failures were, e.g. `HTTP 503` or `fetch failed`, with their counts. */
  reasons: Record<string, number>;
  /** The slowest answer (or failure) in the window. */
  maxMs: number;
}

/** `true` for a correct answer, the reason for a failed request, undefined for a request not made. */
export type Outcome = true | string | undefined;

/** A load window's tallies; `reads` only when the load was asked for status reads. */
export type LoadWindow = Record<'sessions' | 'paymaster' | 'deposits', Tally> & { reads?: Tally };

/**
 * The steady load: three loops (sessions, paymaster, deposits) each one request at a time, 100 ms apart,
 * and optionally a fourth reading sessions' public status.
 * A request that does not get its correct answer (a network error, a 5xx, a paymaster upstream or price
 * error, a signal that did not reach the workflow) counts as failed; a refusal by a sponsorship limit
 * (the sender's hourly operations, the merchant's share of the testnet budget, which a long run reaches)
 * is a correct answer.
 */
export class SteadyLoad {
  readonly accepted: string[] = [];
  readonly signalled: string[] = [];
  private awaitingDeposit: string[] = [];
  /** Per sender: operations the paymaster answered with signed data, and requests sent. */
  readonly signedBySender = new Map<string, number>();
  readonly sentBySender = new Map<string, number>();
  paymasterSent = 0;
  private window: LoadWindow;
  /** The current window's failed requests: when each was sent and answered (performance.now()), and why. */
  failures: { kind: string; sentAt: number; answeredAt: number; reason: string }[] = [];
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly call: (path: string, init?: RequestInit & { json?: unknown }) => Promise<TestResponse>,
    private readonly sk: { authorization: string },
    private readonly clientId: string,
    private readonly temporal: () => Client,
    private readonly options: { statusReads?: boolean } = {},
  ) {
    this.window = this.emptyWindow();
  }

  private emptyWindow(): LoadWindow {
    return {
      ...(this.options.statusReads ? { reads: { sent: 0, failed: 0, reasons: {}, maxMs: 0 } } : {}),
      sessions: { sent: 0, failed: 0, reasons: {}, maxMs: 0 },
      paymaster: { sent: 0, failed: 0, reasons: {}, maxMs: 0 },
      deposits: { sent: 0, failed: 0, reasons: {}, maxMs: 0 },
    };
  }

  start(): void {
    this.window = this.emptyWindow();
    this.running = true;
    this.failures = [];
    this.loops = [
      this.loop('sessions', () => this.createSession(), this.window.sessions),
      this.loop('paymaster', () => this.askPaymaster(), this.window.paymaster),
      this.loop('deposits', () => this.deposit(), this.window.deposits),
      ...(this.window.reads ? [this.loop('reads', () => this.readStatus(), this.window.reads)] : []),
    ];
  }

  /** Whether every kind of request has been answered correctly at least once in the current window. */
  answeredByEveryKind(): boolean {
    return Object.values(this.window).every((tally) => tally.sent - tally.failed > 0);
  }

  async stop(): Promise<LoadWindow> {
    this.running = false;
    await Promise.all(this.loops);
    return this.window;
  }

  private async loop(kind: string, attempt: () => Promise<Outcome>, tally: Tally): Promise<void> {
    while (this.running) {
      const started = performance.now();
      const outcome = await attempt().catch(
        // undici's TypeError is not of jest's realm (no instanceof); its cause says what broke.
        (error: { message?: string; cause?: { code?: string; message?: string } }) =>
          `${(error?.message ?? String(error)).slice(0, 60)}${error?.cause ? ` (${error.cause.code ?? error.cause.message})` : ''}`,
      );
      if (outcome !== undefined) {
        tally.sent += 1;
        tally.maxMs = Math.max(tally.maxMs, performance.now() - started);
        if (outcome !== true) {
          tally.failed += 1;
          tally.reasons[outcome] = (tally.reasons[outcome] ?? 0) + 1;
          this.failures.push({ kind, sentAt: started, answeredAt: performance.now(), reason: outcome });
        }
      }
      await delay(100);
    }
  }

  private async createSession(): Promise<Outcome> {
    const response = await this.call('/v1/sessions', {
      method: 'POST',
      headers: this.sk,
      json: { amount: '5', sandboxMode: true },
    });
    if (response.status !== 201) return `HTTP ${response.status}`;
    this.accepted.push(response.body.id);
    this.awaitingDeposit.push(response.body.id);
    return true;
  }

  /** The public status of an accepted session, as a checkout page polls it. */
  private async readStatus(): Promise<Outcome> {
    const sessionId = this.accepted[Math.floor(Math.random() * this.accepted.length)];
    if (!sessionId) return undefined;
    const response = await this.call(`/v1/sessions/${sessionId}/status`);
    return response.status === 200 || `HTTP ${response.status}`;
  }

  private async askPaymaster(): Promise<Outcome> {
    const number = this.paymasterSent++;
    const sender = `0x${(0xa0000 + Math.floor(number / OPS_PER_SENDER)).toString(16).padStart(40, '0')}`;
    this.sentBySender.set(sender, (this.sentBySender.get(sender) ?? 0) + 1);
    const response = await this.call('/v1/paymaster/rpc', {
      method: 'POST',
      headers: { 'x-client-id': this.clientId },
      json: {
        jsonrpc: '2.0',
        id: number,
        method: 'pm_getPaymasterData',
        params: [operation(sender, number), ENTRY_POINT_V07_ADDRESS, `0x${CHAIN_ID.toString(16)}`],
      },
    });
    if (response.status !== 200) return `HTTP ${response.status}`;
    if (response.body.result) {
      this.signedBySender.set(sender, (this.signedBySender.get(sender) ?? 0) + 1);
      return true;
    }
    const message: string = response.body.error?.message ?? 'no result';
    return /paymaster_(rate_limit|global_cap|spend_cap)_exceeded/.test(message) || message.slice(0, 60);
  }

  /** A deposit for the oldest accepted session not yet paid: the workflow turns confirming and emits its event. */
  private async deposit(): Promise<Outcome> {
    const sessionId = this.awaitingDeposit.shift();
    if (!sessionId) return undefined;
    try {
      await this.temporal()
        .workflow.getHandle(sessionWorkflowId(sessionId))
        .signal(depositDetectedSignal, {
          chainId: CHAIN_ID,
          token: '0x0000000000000000000000000000000000000001',
          amount: '5000000',
          txHash: `0x${randomBytes(32).toString('hex')}`,
          blockNumber: '7',
        });
      this.signalled.push(sessionId);
      return true;
    } catch (error) {
      // Pay it later. A session accepted while Temporal was away has no workflow until the reconciler
      // starts it: that is no failed request. Temporal not answering is.
      this.awaitingDeposit.push(sessionId);
      return error instanceof WorkflowNotFoundError ? undefined : `signal: ${(error as Error).name}`;
    }
  }
}

function operation(sender: string, nonce: number) {
  return {
    sender,
    nonce: `0x${nonce.toString(16)}`,
    callData: encodeFunctionData({
      abi: parseAbi(['function execute(address target, uint256 value, bytes data)']),
      functionName: 'execute',
      args: [TARGET, 0n, '0x'],
    }),
    callGasLimit: '0x186a0',
    verificationGasLimit: '0x30000',
    preVerificationGas: '0xc350',
    maxFeePerGas: '0x3b9aca00',
    maxPriorityFeePerGas: '0x1',
    signature: '0x',
  };
}

/**
 * Afterwards: every accepted session has its workflow, every paid session one event and its delivery
 * (received by the endpoint), usage rows neither lost nor doubled, and no sender past its limit.
 */
export async function expectLoadInvariants({
  db,
  temporalClient,
  sessionsTaskQueue,
  merchantId,
  load,
  receiver,
  workerOutput,
}: {
  db: Db;
  temporalClient: Client;
  sessionsTaskQueue: string;
  merchantId: string;
  load: SteadyLoad;
  receiver: WebhookReceiver;
  /** What the worker processes said (for a failure message). */
  workerOutput: () => string;
}): Promise<{ signedRows: number }> {
  // The reconciler schedule's run: sessions accepted while Temporal was away get their workflows.
  const reconciler = createSessionReconcilerActivities({
    db,
    startSessionWorkflow: sessionStarterFor(temporalClient, sessionsTaskQueue),
  });
  await reconciler.startMissingSessionWorkflows({ olderThanSec: 0 });
  // Every stored session, including those whose 201 the SIGKILL cut off, and every accepted one among them.
  const stored = (
    await db.selectFrom('sessions').select('id').where('merchant_id', '=', merchantId).execute()
  ).map((row) => row.id);
  expect(new Set(stored)).toEqual(new Set([...stored, ...load.accepted]));
  const missing: string[] = [];
  for (const id of stored) {
    await temporalClient.workflow
      .getHandle(sessionWorkflowId(id))
      .describe()
      .catch(() => missing.push(id));
  }
  expect(missing).toEqual([]);
  expect(load.accepted.length).toBeGreaterThan(50);

  // Every paid session has its one event, and every event its delivery, received by the endpoint.
  await until(
    async () => {
      const { count } = await db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('merchant_id', '=', merchantId)
        .executeTakeFirstOrThrow();
      return Number(count) >= load.signalled.length;
    },
    120_000,
    workerOutput,
  );
  const events = await db
    .selectFrom('events')
    .select(['id', 'session_id'])
    .where('merchant_id', '=', merchantId)
    .execute();
  expect(events.map((event) => event.session_id).sort()).toEqual([...load.signalled].sort());
  await until(
    async () => {
      const received = new Set(receiver.received.map((request) => request.headers['x-service-event-id']));
      return events.every((event) => received.has(event.id));
    },
    180_000,
    workerOutput,
  );
  const deliveries = await db
    .selectFrom('webhook_deliveries')
    .select(['event_id', 'status'])
    .where('merchant_id', '=', merchantId)
    .execute();
  expect(new Set(deliveries.map((delivery) => delivery.event_id)).size).toBe(events.length);

  // Usage: no more rows than requests sent, every signed answer has its row, no operation signed twice,
  // and no sender beyond its hourly operation limit, whatever the faults did.
  const rows = await db
    .selectFrom('paymaster_usage')
    .select(['sender', 'status', 'user_op_hash', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .execute();
  expect(rows.length).toBeLessThanOrEqual(load.paymasterSent);
  const signedRows = rows.filter((row) => row.user_op_hash !== null);
  expect(new Set(signedRows.map((row) => row.user_op_hash)).size).toBe(signedRows.length);
  const signedRowsBySender = new Map<string, number>();
  for (const row of signedRows)
    signedRowsBySender.set(row.sender!, (signedRowsBySender.get(row.sender!) ?? 0) + 1);
  const lost = [...load.signedBySender].filter(
    ([sender, answered]) => (signedRowsBySender.get(sender) ?? 0) < answered,
  );
  expect(lost).toEqual([]);
  // The limit is per sender and UTC hour: a load that crosses an hour's end may sign a sender's
  // operations in both hours (3 + 1 was once taken for an overshoot), so count by sender and hour.
  const signedRowsBySenderHour = new Map<string, number>();
  for (const row of signedRows) {
    const key = `${row.sender!} ${startOfUtcHour(row.created_at).toISOString()}`;
    signedRowsBySenderHour.set(key, (signedRowsBySenderHour.get(key) ?? 0) + 1);
  }
  const overshoot = [...signedRowsBySenderHour].filter(([, signed]) => signed > SENDER_HOURLY_OPS);
  expect(overshoot).toEqual([]);
  // The per-sender counters agree with the rows they guard.
  const counters = await sql<{ used: string }>`
    select used from paymaster_limit_counters where counter_key like ${`%${merchantId}%`}
      and counter_key like '%ops%'`.execute(db);
  for (const counter of counters.rows) expect(Number(counter.used)).toBeLessThanOrEqual(SENDER_HOURLY_OPS);
  return { signedRows: signedRows.length };
}

/** `1.2 % (3/250), 4.5 s`: a window's failure rate and its slowest answer. */
export function percent({ sent, failed, maxMs }: Tally): string {
  return `${((100 * failed) / (sent || 1)).toFixed(1)} % (${failed}/${sent}), ${(maxMs / 1000).toFixed(1)} s`;
}

/** One request of a closed-loop load: when it finished (performance.now()) and how. */
export interface TimedOutcome {
  at: number;
  failure?: string;
}

/**
 * A closed-loop read load at full speed: `connections` loops, each sending its next GET as soon as the
 * last one answered, until `signal` aborts. A failure is anything but a 200; fast failures count as
 * much as slow ones, so the share of failed requests in a time window is what a client saw.
 */
export async function readAtFullSpeed({
  baseUrl,
  paths,
  connections,
  signal,
}: {
  baseUrl: string;
  paths: readonly string[];
  connections: number;
  signal: AbortSignal;
}): Promise<TimedOutcome[]> {
  const outcomes: TimedOutcome[] = [];
  let next = 0;
  const loop = async () => {
    while (!signal.aborted) {
      const path = paths[next++ % paths.length]!;
      const failure = await fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(30_000) }).then(
        async (response) => {
          await response.arrayBuffer();
          return response.status === 200 ? undefined : `HTTP ${response.status}`;
        },
        // undici's TypeError is not of jest's realm (no instanceof); its cause says what broke.
        (error: { message?: string; cause?: { code?: string; message?: string } }) =>
          `${error.message ?? 'failed'}${error.cause ? ` (${error.cause.code ?? error.cause.message})` : ''}`,
      );
      outcomes.push({ at: performance.now(), failure });
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return outcomes;
}

/** The outcomes that finished in [from, to): how many, how many failed, their share, and why they failed. */
export function failedShare(
  outcomes: readonly TimedOutcome[],
  from: number,
  to: number,
): { sent: number; failed: number; share: number; reasons: Record<string, number> } {
  const inWindow = outcomes.filter((outcome) => outcome.at >= from && outcome.at < to);
  const failed = inWindow.filter((outcome) => outcome.failure !== undefined);
  const reasons: Record<string, number> = {};
  for (const { failure } of failed) reasons[failure!] = (reasons[failure!] ?? 0) + 1;
  return {
    sent: inWindow.length,
    failed: failed.length,
    share: failed.length / (inWindow.length || 1),
    reasons,
  };
}
