import {
  sql,
  type Insertable,
  type OnConflictBuilder,
  type OnConflictDoNothingBuilder,
  type Selectable,
  type SelectQueryBuilder,
} from 'kysely';
import type { Db } from './client';
import type { Database, EventsTable } from './schema';

export type EventRow = Selectable<EventsTable>;

type StoredEventQuery = SelectQueryBuilder<Database, 'events', EventRow>;

/** An event's common columns. */
function eventValues(event: Omit<NewEvent, 'sessionId'> & { sessionId: string | null }) {
  return {
    id: event.id,
    type: event.type,
    merchant_id: event.merchantId,
    session_id: event.sessionId,
    payload: event.payload,
    created_at: event.createdAt,
  };
}

/**
 * The insert-once every stored event shares: inserted unless `conflict` (the unique index that makes it
 * once) finds it stored already, and the stored row returned either way, so a retried writer gets the
 * first event back, id and bytes unchanged.
 */
async function insertOrFindStored(
  db: Db,
  values: Insertable<EventsTable>,
  conflict: (
    builder: OnConflictBuilder<Database, 'events'>,
  ) => OnConflictDoNothingBuilder<Database, 'events'>,
  stored: (query: StoredEventQuery) => StoredEventQuery,
): Promise<EventRow> {
  const inserted = await db
    .insertInto('events')
    .values(values)
    .onConflict(conflict)
    .returningAll()
    .executeTakeFirst();
  return inserted ?? stored(db.selectFrom('events').selectAll()).executeTakeFirstOrThrow();
}

/**
 * Sent on request to one endpoint (`POST …/webhooks/{id}/send-test-event`), never by subscription: an
 * endpoint does not list it, and its deliveries never count toward disabling the endpoint. Its rows have
 * no session and name their endpoint; webhooks/events.ts writes its body.
 */
export const ENDPOINT_TEST_EVENT_TYPE = 'endpoint.test';

/**
 * The one type a session may store more than once: once per failure (repairs can fail again). The partial
 * unique index `events_session_type_once` holds every other type to one per session.
 */
export const REPEATABLE_SESSION_EVENT_TYPE = 'session.failed';

/**
 * Stores the `session.paid_late` event of one late deposit unless that deposit has one (the unique index
 * `events_deposit_once`), and returns the stored one either way: a rescan of the range, or a retried
 * scan, gets the first event back, id and payload unchanged.
 */
export async function insertLateDepositEventOnce(
  db: Db,
  event: NewEvent & { depositId: string },
): Promise<EventRow> {
  return insertOrFindStored(
    db,
    { ...eventValues(event), deposit_id: event.depositId },
    (conflict) => conflict.column('deposit_id').where('deposit_id', 'is not', null).doNothing(),
    (stored) => stored.where('deposit_id', '=', event.depositId),
  );
}

/** Stores a refund's event once per (refund, type); a second call returns the first one, id and bytes unchanged. */
export async function insertRefundEventOnce(
  db: Db,
  event: NewEvent & { refundId: string },
): Promise<EventRow> {
  return insertOrFindStored(
    db,
    { ...eventValues(event), refund_id: event.refundId },
    (conflict) => conflict.columns(['refund_id', 'type']).where('refund_id', 'is not', null).doNothing(),
    (stored) => stored.where('refund_id', '=', event.refundId).where('type', '=', event.type),
  );
}

export interface NewEvent {
  id: string;
  type: string;
  merchantId: string;
  sessionId: string;
  payload: string;
  createdAt: Date;
}

/**
 * Stores the event unless the session already has one of this type, and returns the stored one
 * either way: a replayed or retried activity gets the first event back, id and payload unchanged.
 */
export async function insertSessionEventOnce(db: Db, event: NewEvent): Promise<EventRow> {
  return insertOrFindStored(
    db,
    eventValues(event),
    // The partial unique index `events_session_type_once` (every type but the repeatable ones), its
    // predicate spelled as the index spells it (migration 2026_11_28_1601) so Postgres infers the index.
    (conflict) =>
      conflict
        .columns(['session_id', 'type'])
        .where(
          sql<boolean>`type NOT IN ('session.failed', 'session.paid_late', 'refund.succeeded', 'refund.failed')`,
        )
        .doNothing(),
    (stored) => stored.where('session_id', '=', event.sessionId).where('type', '=', event.type),
  );
}

/**
 * Stores an event whose id its maker derives from what it is about (a subscription's event: one per
 * subscription and occasion, subscriptions/subscriptionEvents.ts) unless that id is stored, and returns the
 * stored one either way: a retried activity or a request sent again gets the first event, bytes unchanged.
 */
export async function insertEventOnceById(
  db: Db,
  event: Omit<NewEvent, 'sessionId'> & { sessionId: string | null },
): Promise<EventRow> {
  return insertOrFindStored(
    db,
    eventValues(event),
    (conflict) => conflict.column('id').doNothing(),
    (stored) => stored.where('id', '=', event.id),
  );
}

/** Stores a test event for one endpoint (`endpoint.test`: no session, addressed by `endpoint_id`). */
export async function insertEndpointTestEvent(
  db: Db,
  event: Omit<NewEvent, 'sessionId' | 'type'> & { endpointId: string },
): Promise<EventRow> {
  return db
    .insertInto('events')
    .values({
      id: event.id,
      type: ENDPOINT_TEST_EVENT_TYPE,
      merchant_id: event.merchantId,
      session_id: null,
      endpoint_id: event.endpointId,
      payload: event.payload,
      created_at: event.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Drops a test event whose delivery could not be started, so no event is left that nothing delivers. */
export async function deleteEndpointTestEvent(db: Db, id: string): Promise<void> {
  await db.deleteFrom('events').where('id', '=', id).where('type', '=', ENDPOINT_TEST_EVENT_TYPE).execute();
}

export async function findEventById(db: Db, id: string): Promise<EventRow | undefined> {
  return db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The session's most recent event (what a manual re-dispatch sends again). */
export async function findLatestSessionEvent(db: Db, sessionId: string): Promise<EventRow | undefined> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Takes one manual re-dispatch of `sessionId` from the UTC hour's allowance (a conditional upsert: the
 * row lock serialises concurrent requests, the WHERE refuses the one past `limit`). False when used up.
 */
export async function takeWebhookRedispatch(
  db: Db,
  { sessionId, windowStart, limit }: { sessionId: string; windowStart: Date; limit: number },
): Promise<boolean> {
  const taken = await db
    .insertInto('webhook_redispatch_counters')
    .values({ session_id: sessionId, window_start: windowStart, used: 1 })
    .onConflict((conflict) =>
      conflict
        .columns(['session_id', 'window_start'])
        .doUpdateSet((eb) => ({ used: eb('webhook_redispatch_counters.used', '+', 1) }))
        .where('webhook_redispatch_counters.used', '<', limit),
    )
    .returning('used')
    .executeTakeFirst();
  return taken !== undefined;
}
