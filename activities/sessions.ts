import { ApplicationFailure, heartbeat, sleep } from '@temporalio/activity';
import type { Db } from '../db/client';
import { findCoveringAcceptedDeposit, readCheckpointTimes } from '../db/deposits';
import { findLatestSessionEventOfType } from '../db/sessionEvents';
import type { EventRow } from '../db/events';
import {
  completeSession,
  expireSessionWithEvent,
  failSession,
  listPaymentOptionChainIds,
  recordSessionDeposit,
  recordSweepFailure,
  reopenPaidSessionForSettlement,
  reopenSessionForSettlement,
  transitionSession,
} from '../db/sessions';
import type { SessionEventType } from '../webhooks/events';
import { serialiseSessionLifecycleEvent } from '../webhooks/sessionLifecycleEvents';

export interface SessionActivityDependencies {
  db: Db;
  /** The checkpoint key (workflow id) of this deployment's deposit monitor on `chainId`. */
  chainMonitorIdOf?: (chainId: number) => string;
  /** How long an unpaid session's expiry waits for lagging deposit monitors (default 30 minutes). */
  expiryScanWaitMs?: number;
  /**
   * Starts the deliveries of a stored event (activities/sessionEvents.ts `startDeliveriesOf`), so an expiry
   * starts its event's deliveries itself; without it the workflow starts them.
   */
  startEventDeliveries?: (event: Pick<EventRow, 'id' | 'merchant_id' | 'type'>) => Promise<unknown>;
}

/**
 * The end of an unpaid session's life, decided in one activity
 * (docs/decisions.md "Expiry in one activity"): paid on time by a covering deposit the monitors
 * recorded, or expired with its event.
 */
export type ExpiryOutcome =
  { paid: DepositDetected } | { expired: SessionChange; deliveriesStarted: boolean };

/** Failure type of a completion refused because the settled funds do not cover the amount. */
export const SESSION_UNDERPAID = 'SessionUnderpaid';

const DEFAULT_EXPIRY_SCAN_WAIT_MS = 30 * 60_000;

/**
 * A confirmed deposit that covers one of the session's payment options, as the chain monitor signals
 * it: the option's facts plus the transfer that completed the payment.
 */
export interface DepositDetected {
  chainId: number;
  token: string;
  /** Total base units accepted for this option so far (decimal string, exact); ≥ the option amount. */
  amount: string;
  txHash: string;
  blockNumber: string;
  logIndex?: number;
  depositAddress?: string;
  decimals?: number;
}

/** A session's on-chain phase run again (retry-forwarder), with the deposit it settles. */
export interface SettlingAgain {
  sessionId: string;
  deposit: DepositDetected;
  /** ISO time the payment is recorded as made. */
  paidAt: string;
}

const reopenedPayment = ({ sessionId, deposit, paidAt }: SettlingAgain) => ({
  id: sessionId,
  txHash: deposit.txHash,
  chainId: deposit.chainId,
  paidAt: new Date(paidAt),
});

/**
 * A status change and the event it stored in its transaction (docs/decisions.md "Session lifecycle events (issue 29)"), for the workflow to deliver.
 * `eventId` is also answered to a retried call that finds the change made (the event is the one stored
 * then), so a crash between the commit and the deliveries' start loses nothing.
 */
export interface SessionChange {
  changed: boolean;
  eventId: string | null;
  /** Events the same change stored after its own (a completion's `session.overpaid`), delivered after it. */
  followingEventIds?: string[];
}

/** The shortest and longest pause between two reads of the monitors' checkpoints (heartbeats go between). */
const CHECKPOINT_POLL_MIN_MS = 1_000;
const CHECKPOINT_POLL_MAX_MS = 10_000;

/**
 * Polls the monitors' checkpoints (heartbeating) until each has scanned past `expiresAt`; false at the
 * deadline. A checkpoint's block time follows the chain at a steady lag (the confirmations and the scan),
 * so the most lagging one is expected past `expiresAt` in about `expiresAt` − its block time from now: the
 * next read waits that long (1–10 s), so an expiry on a 12-confirmation chain reads about 15 times, not once a
 * second for the 2.5 minutes its confirmations take. Only when to read changes: nothing returns true before
 * every checkpoint is past `expiresAt`.
 */
async function awaitCheckpointsPast(
  db: Db,
  monitorIds: string[],
  { expiresAt, deadline }: { expiresAt: string; deadline: number },
): Promise<boolean> {
  const expiresAtMs = Date.parse(expiresAt);
  for (;;) {
    const times = await readCheckpointTimes(db, monitorIds);
    const lagging = [...times.values()].filter((time) => !time || time.getTime() < expiresAtMs);
    if (lagging.length === 0) return true;
    if (Date.now() >= deadline) return false;
    const behindMs = Math.max(
      ...lagging.map((time) => (time ? expiresAtMs - time.getTime() : CHECKPOINT_POLL_MIN_MS)),
    );
    heartbeat();
    await sleep(
      Math.min(
        Math.max(behindMs, CHECKPOINT_POLL_MIN_MS),
        CHECKPOINT_POLL_MAX_MS,
        Math.max(deadline - Date.now(), 0),
      ),
    );
  }
}

/** The payment options' chains of a session, as their deposit monitors' checkpoint keys. */
async function monitorIdsOf(db: Db, sessionId: string, chainMonitorIdOf: (chainId: number) => string) {
  return (await listPaymentOptionChainIds(db, sessionId)).map(chainMonitorIdOf);
}

/** The change, with the latest event of these types the session holds (the one the change stored). */
async function changeWithEvent(
  db: Db,
  sessionId: string,
  changed: boolean,
  types: readonly SessionEventType[],
): Promise<SessionChange> {
  return { changed, eventId: (await findLatestSessionEventOfType(db, sessionId, types))?.id ?? null };
}

const EXPIRY_EVENT_TYPES = ['session.expired', 'session.underpaid'] as const;

/**
 * awaiting_payment → expired (or underpaid), with the event the change stored: answered by the change
 * itself, read back only when a retry finds the change made.
 */
async function expireWithEvent(
  db: Db,
  sessionId: string,
): Promise<{ change: SessionChange; event: EventRow | undefined }> {
  const stored = await expireSessionWithEvent(db, sessionId, serialiseSessionLifecycleEvent);
  const event = stored ?? (await findLatestSessionEventOfType(db, sessionId, EXPIRY_EVENT_TYPES));
  return { change: { changed: stored !== undefined, eventId: event?.id ?? null }, event };
}

/** The expiry of an unpaid session: its wait for the deposit monitors, and the status change it ends in. */
function createExpiryActivities({
  db,
  chainMonitorIdOf,
  expiryScanWaitMs = DEFAULT_EXPIRY_SCAN_WAIT_MS,
  startEventDeliveries,
}: SessionActivityDependencies) {
  /** Waits until the session's monitors are past `expiresAt` (see `awaitCheckpointsPast`); true without monitors. */
  const awaitScansPast = async (sessionId: string, expiresAt: string) =>
    !chainMonitorIdOf ||
    awaitCheckpointsPast(db, await monitorIdsOf(db, sessionId, chainMonitorIdOf), {
      expiresAt,
      deadline: Date.now() + expiryScanWaitMs,
    });
  return {
    /**
     * An unpaid session's expiry in one activity, so its workflow wakes once (its timer's task, then this
     * activity's completion) instead of three times: waits as `awaitDepositScansPast` does (heartbeating,
     * until every monitor of the session's chains has scanned a block stamped at or after `expiresAt`, at
     * most `expiryScanWaitMs`), then reads the session's on-time (`accepted`) deposits the monitors
     * recorded. One covering an option: the session was paid on time, answered as the deposit signal the
     * monitor sent (recorded before its checkpoint moved past the block, so it is there by now). None:
     * `expired` (or `session.underpaid`) with its event, whose deliveries it starts. Idempotent: a retry
     * finds the change made and answers its event.
     */
    async expireAfterDepositScans({
      sessionId,
      expiresAt,
    }: {
      sessionId: string;
      expiresAt: string;
    }): Promise<ExpiryOutcome> {
      await awaitScansPast(sessionId, expiresAt);
      const covering = await findCoveringAcceptedDeposit(db, sessionId);
      if (covering) return { paid: covering };
      const { change, event } = await expireWithEvent(db, sessionId);
      if (event && startEventDeliveries) await startEventDeliveries(event);
      return { expired: change, deliveriesStarted: startEventDeliveries !== undefined };
    },

    /**
     * Whether a payment was on time is decided by chain time: before an unpaid session expires, wait
     * (heartbeating) until the deposit monitor of every chain it can be paid on has scanned a block stamped
     * at or after `expiresAt`, so a transfer mined in time but seen late still counts. Chains without a
     * monitor checkpoint here are not waited for; after `expiryScanWaitMs` it stops waiting (a deposit
     * the monitor finds later is still on time by its block and can be settled by retry-forwarder).
     * Returns whether every monitor got there. Kept for histories made before `expireAfterDepositScans`.
     */
    async awaitDepositScansPast({
      sessionId,
      expiresAt,
    }: {
      sessionId: string;
      expiresAt: string;
    }): Promise<boolean> {
      return awaitScansPast(sessionId, expiresAt);
    },

    /**
     * awaiting_payment → expired at the workflow's expiry timer, with `session.expired` or (a partial
     * deposit arrived) `session.underpaid`; unchanged when the session moved on meanwhile. Kept for
     * histories made before `expireAfterDepositScans`.
     */
    async markSessionExpired(sessionId: string): Promise<SessionChange> {
      return (await expireWithEvent(db, sessionId)).change;
    },
  };
}

/** Database side of the payment-session workflow. Every activity is idempotent: a replay changes nothing. */
export function createSessionActivities(dependencies: SessionActivityDependencies) {
  const { db } = dependencies;
  return {
    ...createExpiryActivities(dependencies),

    /** awaiting_payment → confirming, with paidAt and the deposit transaction. */
    async markSessionConfirming({
      sessionId,
      deposit,
      paidAt,
    }: {
      sessionId: string;
      deposit: DepositDetected;
      paidAt: string;
    }): Promise<boolean> {
      const updated = await recordSessionDeposit(db, {
        id: sessionId,
        txHash: deposit.txHash,
        chainId: deposit.chainId,
        paidAt: new Date(paidAt),
      });
      return updated !== undefined;
    },

    /** confirming → bridging, once the USDe is on its way to the settlement chain. */
    async markSessionBridging(sessionId: string): Promise<boolean> {
      return transitionSession(db, { id: sessionId, from: ['confirming'], to: 'bridging' });
    },

    /**
     * confirming or bridging → completed: sUSDe delivered, with `session.overpaid` following
     * `session.completed` when more than the amount arrived. Refused (non-retryable SessionUnderpaid) when
     * the settled funds of no option cover its amount, so an underpaid session is never completed.
     */
    async markSessionCompleted(sessionId: string): Promise<SessionChange> {
      const result = await completeSession(db, sessionId, serialiseSessionLifecycleEvent);
      if (result === 'not_covered')
        throw ApplicationFailure.nonRetryable(
          'the settled funds do not cover the session amount',
          SESSION_UNDERPAID,
        );
      const change = await changeWithEvent(db, sessionId, result === 'completed', ['session.completed']);
      const overpaid = await findLatestSessionEventOfType(db, sessionId, ['session.overpaid']);
      return { ...change, followingEventIds: overpaid ? [overpaid.id] : [] };
    },

    /**
     * The on-chain phase reverted: failed, with the revert reason kept for the merchant and operators, and
     * a `session.failed` event for this failure (a retried call answers the one it stored).
     */
    async markSessionFailed({
      sessionId,
      reason,
    }: {
      sessionId: string;
      reason: string;
    }): Promise<SessionChange> {
      const changed = await failSession(db, { id: sessionId, reason }, serialiseSessionLifecycleEvent);
      return changeWithEvent(db, sessionId, changed, ['session.failed']);
    },

    /**
     * retry-forwarder on an ended session holding funds: when the transfers into the deposit's option cover
     * its amount an expired or failed session reopens (→ confirming, on to completed); otherwise — underpaid,
     * or already completed (final: one `session.confirming` per session) — it keeps its status and the funds
     * are only swept to the payout address. Returns whether it reopened.
     */
    async beginLateSettlement(settling: SettlingAgain): Promise<boolean> {
      return reopenPaidSessionForSettlement(db, {
        ...reopenedPayment(settling),
        tokenAddress: settling.deposit.token,
      });
    },

    /** A sweep of an underpaid session failed: the reason is kept, the status is not changed. */
    async recordSweepFailure({ sessionId, reason }: { sessionId: string; reason: string }): Promise<void> {
      await recordSweepFailure(db, { id: sessionId, reason });
    },

    /** retry-forwarder on a failed session: back to confirming to run the on-chain phase again. */
    async markSessionSettlingAgain(settling: SettlingAgain): Promise<boolean> {
      return reopenSessionForSettlement(db, reopenedPayment(settling));
    },
  };
}

export type SessionActivities = ReturnType<typeof createSessionActivities>;
