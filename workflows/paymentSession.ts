import { condition, defineQuery, defineSignal, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { DepositDetected, SessionActivities } from '../activities/sessions';
import { ChainId, SessionStatus } from '../workers/searchAttributes';

/**
 * One workflow per payment session (`session-<uuid>`), reading like SPEC's state table:
 *
 *   awaiting_payment ──deposit signal──▶ confirming ──▶ (settlement: forwarder, swap, bridge, stake)
 *          │
 *          └──expiresAt passes, no deposit──▶ expired
 */
const { markSessionExpired, markSessionConfirming } = proxyActivities<SessionActivities>({
  // Single-row conditional UPDATEs; retried while the database is unreachable.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export const depositDetectedSignal = defineSignal<[DepositDetected]>('depositDetected');
export const sessionStateQuery = defineQuery<PaymentSessionState>('sessionState');

export interface PaymentSessionInput {
  sessionId: string;
  /** ISO 8601; the workflow's own timer ends an unpaid session then. */
  expiresAt: string;
}

export interface PaymentSessionState {
  status: 'awaiting_payment' | 'confirming' | 'expired';
  deposit?: DepositDetected;
}

export async function paymentSessionWorkflow({ sessionId, expiresAt }: PaymentSessionInput): Promise<PaymentSessionState> {
  const state: PaymentSessionState = { status: 'awaiting_payment' };
  setHandler(sessionStateQuery, () => state);
  // The first deposit decides the session; later ones are the settlement step's concern.
  setHandler(depositDetectedSignal, (deposit) => {
    state.deposit ??= deposit;
  });

  // Workflow time is deterministic (Date.now() replays the same), so the timer is exact on replay.
  const remainingMs = Date.parse(expiresAt) - Date.now();
  const paid = remainingMs > 0 ? await condition(() => state.deposit !== undefined, remainingMs) : state.deposit !== undefined;

  if (!paid) {
    await markSessionExpired(sessionId);
    state.status = 'expired';
    upsertSearchAttributes([{ key: SessionStatus, value: 'expired' }]);
    return state;
  }

  const deposit = state.deposit!;
  await markSessionConfirming({ sessionId, deposit, paidAt: new Date(Date.now()).toISOString() });
  state.status = 'confirming';
  upsertSearchAttributes([
    { key: SessionStatus, value: 'confirming' },
    { key: ChainId, value: deposit.chainId },
  ]);
  return state;
}
