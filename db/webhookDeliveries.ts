import { sql, type Selectable, type Transaction } from 'kysely';
import type { Db } from './client';
import { ENDPOINT_TEST_EVENT_TYPE } from './events';
import type {
  Database,
  WebhookAttemptOutcome,
  WebhookDeliveriesTable,
  WebhookDeliveryAttemptsTable,
  WebhookDeliveryStatus,
} from './schema';

export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookDeliveryAttemptRow = Selectable<WebhookDeliveryAttemptsTable>;

/** PostgreSQL foreign_key_violation: the endpoint (or the delivery) was deleted meanwhile. */
const FOREIGN_KEY_VIOLATION = '23503';
const isForeignKeyViolation = (error: unknown) => (error as { code?: string }).code === FOREIGN_KEY_VIOLATION;

export interface OpenDeliveryParameters {
  merchantId: string;
  endpointId: string;
  eventId: string;
  workflowId: string;
  workflowRunId: string;
  /** A resend's id, chosen before its workflow starts; generated otherwise. */
  deliveryId?: string;
  /** A resend: the delivery it sends again. */
  resendOf?: string;
}

/**
 * The delivery record of one workflow run, created on first call and found on every later one
 * (idempotent per run). Undefined when the endpoint no longer exists.
 */
export async function openWebhookDelivery(
  db: Db,
  delivery: OpenDeliveryParameters,
): Promise<WebhookDeliveryRow | undefined> {
  try {
    await db
      .insertInto('webhook_deliveries')
      .values({
        ...(delivery.deliveryId ? { id: delivery.deliveryId } : {}),
        resend_of: delivery.resendOf ?? null,
        merchant_id: delivery.merchantId,
        endpoint_id: delivery.endpointId,
        event_id: delivery.eventId,
        workflow_id: delivery.workflowId,
        workflow_run_id: delivery.workflowRunId,
      })
      .onConflict((conflict) => conflict.column('workflow_run_id').doNothing())
      .execute();
  } catch (error) {
    if (isForeignKeyViolation(error)) return undefined;
    throw error;
  }
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('workflow_run_id', '=', delivery.workflowRunId)
    .executeTakeFirst();
}

export interface RecordAttemptParameters {
  deliveryId: string;
  attemptNumber: number;
  attemptedAt: Date;
  outcome: WebhookAttemptOutcome;
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
  error: string | null;
  /** When the next attempt is due; null after the last one or a success. */
  nextAttemptAt: Date | null;
}

/**
 * When a run of failures disables its endpoint, and the event that says so: the webhooks' policy
 * (webhooks/endpointDisabling.ts), passed in by the delivery activity.
 */
export interface EndpointDisabling {
  /** How long an endpoint's every attempt may fail before it is disabled. */
  afterFailingMs: number;
  /** The `endpoint.disabled` event of `endpoint`, disabled at `disabledAt`: its id and serialised body. */
  disabledEvent(endpoint: { id: string; url: string }, disabledAt: Date): { id: string; payload: string };
}

/** What recording an attempt came to. */
export interface RecordedAttempt {
  /** False when the delivery was deleted with its endpoint meanwhile. */
  recorded: boolean;
  /** Set when this attempt's failure disabled the endpoint: the `endpoint.disabled` event to announce. */
  disabledEventId: string | null;
}

/**
 * Records one attempt (once: a retried call changes nothing) and moves the delivery along, in one
 * transaction with what follows from it: a success (of a `session.confirming`) marks the session `webhookDelivered` and ends the
 * endpoint's run of failures (a test event's attempts leave that run alone); a failure extends that run, and one that has lasted
 * `disabling.afterFailingMs` (by the attempts' own clock, workflow time) disables the endpoint
 * and stores its `endpoint.disabled` event (docs/operations.md "A webhook endpoint disabled for failing"). A retried call answers the same.
 */
export async function recordWebhookAttempt(
  db: Db,
  attempt: RecordAttemptParameters,
  disabling: EndpointDisabling,
): Promise<RecordedAttempt> {
  const succeeded = attempt.outcome === 'succeeded';
  try {
    return await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_delivery_attempts')
        .values({
          delivery_id: attempt.deliveryId,
          attempt_number: attempt.attemptNumber,
          attempted_at: attempt.attemptedAt,
          outcome: attempt.outcome,
          status_code: attempt.statusCode,
          latency_ms: attempt.latencyMs,
          response_body: attempt.responseBody,
          error: attempt.error,
        })
        .onConflict((conflict) => conflict.columns(['delivery_id', 'attempt_number']).doNothing())
        .execute();
      const delivery = await trx
        .updateTable('webhook_deliveries')
        .set({
          attempt_count: sql<number>`greatest(attempt_count, ${attempt.attemptNumber})`,
          next_attempt_at: succeeded ? null : attempt.nextAttemptAt,
          status: succeeded ? 'succeeded' : sql<WebhookDeliveryStatus>`status`,
          updated_at: new Date(),
        })
        .where('id', '=', attempt.deliveryId)
        .returning((eb) => [
          'event_id',
          'endpoint_id',
          eb
            .selectFrom('events')
            .select('type')
            .whereRef('events.id', '=', 'webhook_deliveries.event_id')
            .as('event_type'),
        ])
        .executeTakeFirst();
      if (!delivery) return { recorded: false, disabledEventId: null };
      // A test the merchant asked for says nothing about how real events fare: it neither starts,
      // extends nor ends the endpoint's run of failures (and has no session to mark).
      if (delivery.event_type === ENDPOINT_TEST_EVENT_TYPE) return { recorded: true, disabledEventId: null };
      if (succeeded) {
        await trx
          .updateTable('sessions')
          .set({ webhook_delivered: true, updated_at: new Date() })
          // SPEC's `webhookDelivered` (the checkout redirect waits for it) is about `session.confirming`.
          .where('id', '=', (eb) =>
            eb
              .selectFrom('events')
              .select('session_id')
              .where('id', '=', delivery.event_id)
              .where('type', '=', 'session.confirming'),
          )
          .where('webhook_delivered', '=', false)
          .execute();
        await trx
          .updateTable('webhook_endpoints')
          .set({ failing_since: null })
          .where('id', '=', delivery.endpoint_id)
          .where('failing_since', 'is not', null)
          .execute();
        return { recorded: true, disabledEventId: null };
      }
      return {
        recorded: true,
        disabledEventId: await extendFailingRun(trx, delivery.endpoint_id, attempt.attemptedAt, disabling),
      };
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) return { recorded: false, disabledEventId: null };
    throw error;
  }
}

/**
 * A failed attempt at `attemptedAt`: starts or extends the endpoint's run of failures, disables the
 * endpoint once the run is `disabling.afterFailingMs` long, and answers the `endpoint.disabled`
 * event of a disabling made at this attempt (also when a retried call finds it already made).
 */
async function extendFailingRun(
  trx: Transaction<Database>,
  endpointId: string,
  attemptedAt: Date,
  disabling: EndpointDisabling,
): Promise<string | null> {
  const endpoint = await trx
    .updateTable('webhook_endpoints')
    .set({ failing_since: sql<Date>`coalesce(failing_since, ${attemptedAt})` })
    .where('id', '=', endpointId)
    .returning([
      'id',
      'merchant_id',
      'url',
      'enabled',
      'failing_since',
      'disabled_reason',
      'disabled_at',
      'disabled_event_id',
    ])
    .executeTakeFirst();
  if (!endpoint) return null;
  const madeNow = (at: Date | null) => at !== null && at.getTime() === attemptedAt.getTime();
  if (endpoint.disabled_reason === 'failing' && madeNow(endpoint.disabled_at))
    return endpoint.disabled_event_id;
  const failingForMs = attemptedAt.getTime() - (endpoint.failing_since ?? attemptedAt).getTime();
  if (!endpoint.enabled || failingForMs < disabling.afterFailingMs) return null;

  const { id: eventId, payload } = disabling.disabledEvent(endpoint, attemptedAt);
  await trx
    .insertInto('events')
    .values({
      id: eventId,
      type: 'endpoint.disabled',
      merchant_id: endpoint.merchant_id,
      session_id: null,
      payload,
      created_at: attemptedAt,
    })
    .execute();
  await trx
    .updateTable('webhook_endpoints')
    .set({
      enabled: false,
      disabled_reason: 'failing',
      disabled_at: attemptedAt,
      disabled_event_id: eventId,
      updated_at: new Date(),
    })
    .where('id', '=', endpoint.id)
    .execute();
  return eventId;
}

/** Ends a pending delivery as `failed` (attempts exhausted) or `canceled` (endpoint disabled or gone). */
export async function finishWebhookDelivery(
  db: Db,
  deliveryId: string,
  status: 'failed' | 'canceled',
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status, next_attempt_at: null, updated_at: new Date() })
    .where('id', '=', deliveryId)
    .where('status', '=', 'pending')
    .execute();
}

export interface ListEndpointDeliveriesParameters {
  merchantId: string;
  endpointId: string;
  limit: number;
  page: number;
  status?: WebhookDeliveryStatus;
}

export interface WebhookDeliveryWithAttempts extends WebhookDeliveryRow {
  event_type: string;
  attempts: WebhookDeliveryAttemptRow[];
}

/** A page of an endpoint's deliveries, newest first, each with its attempts in order. */
export async function listEndpointDeliveries(
  db: Db,
  { merchantId, endpointId, limit, page, status }: ListEndpointDeliveriesParameters,
): Promise<{ rows: WebhookDeliveryWithAttempts[]; total: number }> {
  let query = db
    .selectFrom('webhook_deliveries')
    .where('webhook_deliveries.merchant_id', '=', merchantId)
    .where('webhook_deliveries.endpoint_id', '=', endpointId);
  if (status) query = query.where('webhook_deliveries.status', '=', status);
  const [deliveries, count] = await Promise.all([
    query
      .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
      .selectAll('webhook_deliveries')
      .select('events.type as event_type')
      .orderBy('webhook_deliveries.created_at', 'desc')
      .orderBy('webhook_deliveries.id')
      .limit(limit)
      .offset((page - 1) * limit)
      .execute(),
    query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows: await withAttempts(db, deliveries), total: Number(count.total) };
}

/** Each delivery with its attempts in order (one query for all of them). */
async function withAttempts<Delivery extends WebhookDeliveryRow>(
  db: Db,
  deliveries: Delivery[],
): Promise<(Delivery & { attempts: WebhookDeliveryAttemptRow[] })[]> {
  const attempts = deliveries.length
    ? await db
        .selectFrom('webhook_delivery_attempts')
        .selectAll()
        .where(
          'delivery_id',
          'in',
          deliveries.map((delivery) => delivery.id),
        )
        .orderBy('attempt_number')
        .execute()
    : [];
  return deliveries.map((delivery) => ({
    ...delivery,
    attempts: attempts.filter((attempt) => attempt.delivery_id === delivery.id),
  }));
}

/** Deliveries listed per event of a session's timeline, newest first; the endpoint's own list has them all. */
export const SESSION_EVENT_DELIVERIES_SHOWN = 20;

export interface EventDelivery extends WebhookDeliveryWithAttempts {
  endpoint_url: string;
}

export interface SessionEventWithDeliveries {
  id: string;
  type: string;
  created_at: Date;
  /** Every delivery of the event, also those past the ones listed. */
  delivery_count: number;
  /** The newest SESSION_EVENT_DELIVERIES_SHOWN, each with its attempts. */
  deliveries: EventDelivery[];
}

/**
 * The merchant's session's events, oldest first, each with its deliveries to the merchant's endpoints
 * (newest first, at most SESSION_EVENT_DELIVERIES_SHOWN, each with its attempts and its endpoint's URL).
 */
export async function listSessionEventsWithDeliveries(
  db: Db,
  { merchantId, sessionId }: { merchantId: string; sessionId: string },
): Promise<SessionEventWithDeliveries[]> {
  const events = await db
    .selectFrom('events')
    .select(['id', 'type', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  if (events.length === 0) return [];
  const ranked = db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_endpoints', 'webhook_endpoints.id', 'webhook_deliveries.endpoint_id')
    .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
    .where('webhook_deliveries.merchant_id', '=', merchantId)
    .where(
      'webhook_deliveries.event_id',
      'in',
      events.map((event) => event.id),
    )
    .selectAll('webhook_deliveries')
    .select(['webhook_endpoints.url as endpoint_url', 'events.type as event_type'])
    .select([
      sql<string>`row_number() over (partition by webhook_deliveries.event_id order by webhook_deliveries.created_at desc, webhook_deliveries.id)`.as(
        'position',
      ),
      sql<string>`count(*) over (partition by webhook_deliveries.event_id)`.as('event_total'),
    ])
    .as('ranked');
  const rows = await db
    .selectFrom(ranked)
    .selectAll()
    .where(sql<boolean>`position <= ${SESSION_EVENT_DELIVERIES_SHOWN}`)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  const deliveries = await withAttempts(db, rows);
  return events.map((event) => {
    const own = deliveries.filter((delivery) => delivery.event_id === event.id);
    return {
      ...event,
      delivery_count: Number(own[0]?.event_total ?? 0),
      deliveries: own.map(({ position: _position, event_total: _total, ...delivery }) => delivery),
    };
  });
}

/** One delivery of the merchant's endpoint; undefined for another merchant's or another endpoint's. */
export async function findEndpointDelivery(
  db: Db,
  { merchantId, endpointId, deliveryId }: { merchantId: string; endpointId: string; deliveryId: string },
): Promise<WebhookDeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .where('endpoint_id', '=', endpointId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/**
 * The events whose every delivery to this endpoint since `since` ended without success (failed, or
 * canceled while the endpoint was disabled) and none is still under way, test events aside: what a recovery sends
 * again, oldest first, with the latest of those deliveries (the one a recovery re-sends).
 */
export async function listEventsToRecover(
  db: Db,
  {
    merchantId,
    endpointId,
    since,
    limit,
  }: { merchantId: string; endpointId: string; since: Date; limit: number },
): Promise<{ eventId: string; latestDeliveryId: string }[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .where('merchant_id', '=', merchantId)
    .where('endpoint_id', '=', endpointId)
    .where('created_at', '>=', since)
    // A missed test is not a missed event: recovery sends again what the merchant's systems need.
    .where('event_id', 'not in', (eb) =>
      eb.selectFrom('events').select('events.id').where('events.endpoint_id', '=', endpointId),
    )
    .groupBy('event_id')
    .having(sql<boolean>`bool_and(status IN ('failed', 'canceled'))`)
    .select([
      'event_id',
      sql<string>`(array_agg(id ORDER BY created_at DESC, id))[1]`.as('latest_delivery_id'),
      sql<Date>`min(created_at)`.as('first_created_at'),
    ])
    .orderBy('first_created_at')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ eventId: row.event_id, latestDeliveryId: row.latest_delivery_id }));
}
