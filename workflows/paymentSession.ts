import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { DepositDetected, SessionActivities, SessionChange } from '../activities/sessions';
import type { SettlementActivities } from '../activities/settlement';
import type { SessionEventActivities } from '../activities/sessionEvents';
import { ChainId, SessionStatus } from './searchAttributes';
import type { WorkflowSessionStatus } from '../db/sessionStatus';

/**
 * One workflow per payment session (`session-<uuid>`), reading like SPEC's state table:
 *
 *   awaiting_payment ──confirmed deposit──▶ confirming ──deploy forwarder, swap──┬─ stake ─────────────▶ completed
 *          │                                   │                                  └─ bridge ─▶ bridging ─▶ completed
 *          │                                   └──revert (slippage…)──▶ failed ──retry-forwarder──▶ confirming
 *          └──expiresAt passes (by chain time), no deposit──▶ expired
 *
 * Each arrow into confirming, completed, expired (session.expired or, with a partial deposit,
 * session.underpaid) and failed sends its event to the endpoints that list it.
 *
 * retry-forwarder on an ended session holding funds starts a settling run: an expired or failed session
 * whose option is paid in full goes through confirming to completed; an underpaid one, or a completed one
 * (final: it is never reopened and never sends a second event), is only swept to the payout address and
 * keeps its status.
 */
const sessions = proxyActivities<SessionActivities>({
  // Single-row conditional UPDATEs; retried while the database is unreachable.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const { recordSessionConfirmingEvent, startWebhookDeliveries } = proxyActivities<SessionEventActivities>({
  // An idempotent insert, then one workflow start per endpoint (existing ones count as started).
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const chain = proxyActivities<SettlementActivities>({
  // One transaction and its receipt; RPC hiccups are retried, reverts are final for the attempt. The
  // steps heartbeat, so a dead worker's step is retried elsewhere after 20 s, not 5 minutes.
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
  },
});

const { awaitDepositScansPast, expireAfterDepositScans } = proxyActivities<SessionActivities>({
  // Polls monitor checkpoints while heartbeating; gives up by itself after its configured wait.
  startToCloseTimeout: '35 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const bridge = proxyActivities<SettlementActivities>({
  // Delivery on the settlement chain can take a while; the activity heartbeats while it polls.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * Lifecycle events (docs/decisions.md "Session lifecycle events (issue 29)"): each status change stores its event in its own transaction; the
 * workflow then starts its deliveries. Behind a patch so histories made before it replay unchanged.
 */
const LIFECYCLE_EVENTS_PATCH = 'session-lifecycle-events';

/**
 * Payment outcomes (issue 41): a completion may store `session.overpaid` after `session.completed`; its
 * deliveries start after the completion's. Behind a patch so histories made before it replay unchanged.
 */
const PAYMENT_OUTCOME_EVENTS_PATCH = 'session-payment-outcome-events';

/**
 * An unpaid session's expiry in one activity (docs/decisions.md "Expiry in one activity"): the wait for
 * the monitors, the on-time check, the status write and the event's deliveries, so the workflow wakes once
 * after its timer instead of three times. Behind a patch so histories made before it replay unchanged.
 */
const EXPIRY_IN_ONE_ACTIVITY_PATCH = 'expiry-in-one-activity';

/** Starts the deliveries of the events a status change stored (idempotent: started ones count as started). */
async function deliverEventOf(change: SessionChange): Promise<void> {
  if (!patched(LIFECYCLE_EVENTS_PATCH) || !change.eventId) return;
  await startWebhookDeliveries({ eventId: change.eventId });
  if (!change.followingEventIds?.length || !patched(PAYMENT_OUTCOME_EVENTS_PATCH)) return;
  for (const eventId of change.followingEventIds) await startWebhookDeliveries({ eventId });
}

export const depositDetectedSignal = defineSignal<[DepositDetected]>('depositDetected');
/** retry-forwarder on a failed session: run the on-chain phase again from where it stopped. */
export const retryForwarderSignal = defineSignal('retryForwarder');
export const sessionStateQuery = defineQuery<PaymentSessionState>('sessionState');

export interface PaymentSessionInput {
  sessionId: string;
  /** ISO 8601; the workflow's own timer ends an unpaid session then. */
  expiresAt: string;
  /** Set by retry-forwarder for a session whose workflow had ended (late or extra deposit): settle it now. */
  settleDeposit?: DepositDetected;
}

export interface PaymentSessionState {
  status: WorkflowSessionStatus;
  deposit?: DepositDetected;
  failureReason?: string;
  forwarder?: string;
  flushTxHash?: string;
}

export async function paymentSessionWorkflow({
  sessionId,
  expiresAt,
  settleDeposit,
}: PaymentSessionInput): Promise<PaymentSessionState> {
  const state: PaymentSessionState = { status: 'awaiting_payment' };
  let retryRequested = false;
  setHandler(sessionStateQuery, () => state);
  // The first covering deposit decides the session; later ones are recorded by the monitor as extra.
  setHandler(depositDetectedSignal, (deposit) => {
    state.deposit ??= deposit;
  });
  setHandler(retryForwarderSignal, () => {
    retryRequested = true;
  });
  const enter = (status: PaymentSessionState['status']) => {
    state.status = status;
    upsertSearchAttributes([{ key: SessionStatus, value: status }]);
  };

  if (settleDeposit) {
    state.deposit = settleDeposit;
    const paidAt = new Date(Date.now()).toISOString();
    if (patched('underpaid-late-settlement-sweeps-only')) {
      const reopened = await sessions.beginLateSettlement({ sessionId, deposit: settleDeposit, paidAt });
      if (!reopened) {
        // Underpaid, or completed already: what arrived goes to the payout address; the session keeps its
        // status and no event is sent.
        try {
          await settle(sessionId, settleDeposit, state, { sweepOnly: true });
        } catch (error) {
          if (!(error instanceof ActivityFailure)) throw error;
          state.failureReason = failureReasonOf(error);
          await sessions.recordSweepFailure({ sessionId, reason: state.failureReason });
        }
        return state;
      }
    } else {
      await sessions.markSessionSettlingAgain({ sessionId, deposit: settleDeposit, paidAt });
    }
  } else {
    // Workflow time is deterministic (Date.now() replays the same), so the timer is exact on replay.
    const remainingMs = Date.parse(expiresAt) - Date.now();
    let paid =
      remainingMs > 0
        ? await condition(() => state.deposit !== undefined, remainingMs)
        : state.deposit !== undefined;
    if (!paid && patched(EXPIRY_IN_ONE_ACTIVITY_PATCH)) {
      // On time means mined before expiresAt: the activity lets lagging monitors scan that far first.
      const outcome = await expireAfterDepositScans({ sessionId, expiresAt });
      if ('expired' in outcome) {
        enter('expired');
        if (!outcome.deliveriesStarted) await deliverEventOf(outcome.expired);
        return state;
      }
      // Paid on time: the monitor's signal carries the same deposit (the first one received is kept).
      state.deposit ??= outcome.paid;
      paid = true;
    } else if (!paid && patched('expiry-by-chain-time')) {
      // On time means mined before expiresAt: let lagging deposit monitors scan that far first.
      await awaitDepositScansPast({ sessionId, expiresAt });
      paid = state.deposit !== undefined;
    }
    if (!paid) {
      // expired, or underpaid when part of the amount arrived in time: either way the status is `expired`.
      const expiry = await sessions.markSessionExpired(sessionId);
      enter('expired');
      await deliverEventOf(expiry);
      return state;
    }
    await sessions.markSessionConfirming({
      sessionId,
      deposit: state.deposit!,
      paidAt: new Date(Date.now()).toISOString(),
    });
  }

  const deposit = state.deposit!;
  const event = await recordSessionConfirmingEvent({ sessionId });
  await startWebhookDeliveries({ eventId: event.id });
  enter('confirming');
  upsertSearchAttributes([{ key: ChainId, value: deposit.chainId }]);

  for (;;) {
    try {
      await settle(sessionId, deposit, state, { enter });
      return state;
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      state.failureReason = failureReasonOf(error);
      const failure = await sessions.markSessionFailed({ sessionId, reason: state.failureReason });
      enter('failed');
      await deliverEventOf(failure);
      // Funds stay in the forwarder (or at the deposit address) until an operator or merchant retries.
      await condition(() => retryRequested);
      retryRequested = false;
      await sessions.markSessionSettlingAgain({
        sessionId,
        deposit,
        paidAt: new Date(Date.now()).toISOString(),
      });
      state.failureReason = undefined;
      enter('confirming');
    }
  }
}

/**
 * confirming → (forwarder, swap, stake) → completed, or → (bridge) → bridging → completed. A sweep of an
 * underpaid session runs the same chain steps and changes no status.
 */
async function settle(
  sessionId: string,
  deposit: DepositDetected,
  state: PaymentSessionState,
  {
    enter,
    sweepOnly = false,
  }: { enter?: (status: PaymentSessionState['status']) => void; sweepOnly?: boolean },
): Promise<void> {
  const token = deposit.token as `0x${string}`;
  const depositAddress = deposit.depositAddress as `0x${string}`;
  // Reorg safety: act only on funds that are still there at the chain's head (or already flushed by us).
  await chain.verifyDepositBalance({
    sessionId,
    chainId: deposit.chainId,
    token,
    depositAddress,
    minimum: deposit.amount,
    txHash: deposit.txHash,
    logIndex: deposit.logIndex,
  });
  state.forwarder = await chain.deployForwarder({ sessionId, chainId: deposit.chainId });
  const flush = await chain.flushForwarder({
    sessionId,
    chainId: deposit.chainId,
    token,
    forwarder: state.forwarder as `0x${string}`,
    tokenDecimals: deposit.decimals ?? 6,
  });
  state.flushTxHash = flush.txHash;
  if (flush.bridged) {
    if (!sweepOnly) {
      await sessions.markSessionBridging(sessionId);
      enter?.('bridging');
    }
    await bridge.awaitBridgeDelivery({
      sessionId,
      sourceChainId: deposit.chainId,
      nonce: flush.sharesOrNonce,
      settlementChainId: flush.settlementChainId,
    });
  }
  if (sweepOnly) return;
  const completion = await sessions.markSessionCompleted(sessionId);
  enter?.('completed');
  await deliverEventOf(completion);
}

function failureReasonOf(error: ActivityFailure): string {
  const cause = error.cause;
  if (cause instanceof ApplicationFailure) return cause.message;
  return cause?.message ?? error.message;
}
