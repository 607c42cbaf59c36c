import { randomUUID } from 'node:crypto';
import { normaliseDecimal } from '../money/baseUnits';
import type { SerialisedEvent, SessionLifecycleFacts, SessionRow } from '../db/sessionEvents';
import { newEventId, serialiseSessionEvent, type EventSession, type SessionEvent } from './events';

/**
 * The session lifecycle events' bodies (docs/service-contract.md, webhook events): the serialiser the
 * status changes of db/sessions.ts take, so each event is written inside its change's transaction while its
 * wire shape stays the webhooks' (events.ts).
 */

/** `data.session`: SPEC's session fields with the status the change just wrote. */
export function eventSessionOf<Status extends string>(row: SessionRow, status: Status): EventSession<Status> {
  return {
    id: row.id,
    merchantName: row.merchant_name,
    amount: normaliseDecimal(row.amount),
    status,
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    paidAt: row.paid_at?.toISOString() ?? null,
    txHash: row.tx_hash,
  };
}

type EventBody = Omit<SessionEvent, 'id' | 'createdAt'>;

function lifecycleEventBody(facts: SessionLifecycleFacts): EventBody {
  switch (facts.type) {
    case 'session.expired':
      return { type: facts.type, data: { session: eventSessionOf(facts.session, 'expired' as const) } };
    case 'session.underpaid':
      return {
        type: facts.type,
        data: {
          session: eventSessionOf(facts.session, 'expired' as const),
          receivedAmount: facts.receivedAmount,
        },
      };
    case 'session.failed':
      return {
        type: facts.type,
        data: {
          session: eventSessionOf(facts.session, 'failed' as const),
          failureReason: facts.failureReason,
        },
      };
    case 'session.completed':
      return {
        type: facts.type,
        data: { session: eventSessionOf(facts.session, 'completed' as const), settlement: facts.settlement },
      };
    case 'session.overpaid':
      return {
        type: facts.type,
        data: {
          session: eventSessionOf(facts.session, 'completed' as const),
          receivedAmount: facts.receivedAmount,
          overpaidAmount: facts.overpaidAmount,
        },
      };
    case 'session.paid_late':
      return {
        type: facts.type,
        data: {
          session: eventSessionOf(facts.session, facts.reportedStatus),
          receivedAmount: facts.receivedAmount,
          txHash: facts.txHash,
        },
      };
  }
}

/** A new lifecycle event: its id, its time (now) and its body, serialised once. */
export function serialiseSessionLifecycleEvent(facts: SessionLifecycleFacts): SerialisedEvent {
  const id = newEventId(randomUUID());
  const createdAt = new Date();
  const event = { ...lifecycleEventBody(facts), id, createdAt: createdAt.toISOString() } as SessionEvent;
  return { id, createdAt, payload: serialiseSessionEvent(event) };
}
