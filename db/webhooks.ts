import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { WebhookEndpointsTable } from './schema';

/** A stored endpoint, encrypted secret included: map it to a response model before it leaves the API. */
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;

export interface NewWebhookEndpoint {
  id: string;
  merchantId: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  secretCiphertext: string;
}

/**
 * Inserts the endpoint unless the merchant already has `limit` of them. A per-merchant advisory
 * lock held to the end of the transaction serialises concurrent creations, so the count and the
 * insert cannot interleave: ten parallel requests leave exactly `limit` endpoints.
 */
export async function insertWebhookEndpointWithinLimit(
  db: Db,
  endpoint: NewWebhookEndpoint,
  limit: number,
): Promise<WebhookEndpointRow | 'limit_reached'> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook_endpoints:${endpoint.merchantId}`}, 0))`.execute(
      trx,
    );
    const { count } = await trx
      .selectFrom('webhook_endpoints')
      .where('merchant_id', '=', endpoint.merchantId)
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow();
    if (Number(count) >= limit) return 'limit_reached';
    return trx
      .insertInto('webhook_endpoints')
      .values({
        id: endpoint.id,
        merchant_id: endpoint.merchantId,
        url: endpoint.url,
        description: endpoint.description,
        events: endpoint.events,
        enabled: endpoint.enabled,
        secret_ciphertext: endpoint.secretCiphertext,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

export async function listWebhookEndpoints(db: Db, merchantId: string): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The endpoint only if it belongs to `merchantId`: another merchant's id reads as unknown. */
export async function findMerchantWebhookEndpoint(
  db: Db,
  merchantId: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** For the delivery worker, which acts on behalf of the endpoint's own merchant. */
export async function findWebhookEndpointById(db: Db, id: string): Promise<WebhookEndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface WebhookEndpointChanges {
  url?: string;
  events?: string[];
  enabled?: boolean;
  description?: string | null;
}

export async function updateWebhookEndpoint(
  db: Db,
  merchantId: string,
  id: string,
  changes: WebhookEndpointChanges,
): Promise<WebhookEndpointRow | undefined> {
  // Any change of `enabled` by the merchant ends an automatic disabling and the run of failures behind it.
  const enabledByMerchant =
    changes.enabled === undefined ? {} : { disabled_reason: null, disabled_at: null, failing_since: null };
  return db
    .updateTable('webhook_endpoints')
    .set({ ...changes, ...enabledByMerchant, updated_at: new Date() })
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .returningAll()
    .executeTakeFirst();
}

/** Replaces the signing secret with no overlap: the previous one stops signing from the next attempt on. */
export async function replaceWebhookSecret(
  db: Db,
  merchantId: string,
  id: string,
  secretCiphertext: string,
): Promise<WebhookEndpointRow | undefined> {
  return rotateWebhookSecret(db, { merchantId, id, secretCiphertext, previousSecretExpiresAt: null });
}

/**
 * Rotates the signing secret in one statement: the current secret becomes the previous one, signing
 * beside the new one until `previousSecretExpiresAt` (null: it stops at once). A secret that was
 * still overlapping from an earlier rotation is dropped: at most two secrets sign at any time.
 */
export async function rotateWebhookSecret(
  db: Db,
  {
    merchantId,
    id,
    secretCiphertext,
    previousSecretExpiresAt,
  }: { merchantId: string; id: string; secretCiphertext: string; previousSecretExpiresAt: Date | null },
): Promise<WebhookEndpointRow | undefined> {
  return db
    .updateTable('webhook_endpoints')
    .set({
      // Postgres reads the right-hand side from the row before the update: this is the outgoing secret.
      previous_secret_ciphertext: previousSecretExpiresAt ? sql<string>`secret_ciphertext` : null,
      previous_secret_expires_at: previousSecretExpiresAt,
      secret_ciphertext: secretCiphertext,
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .returningAll()
    .executeTakeFirst();
}

/** Takes one of the endpoint's resends or recoveries of this UTC hour; false when `limit` are used. */
export async function takeEndpointOperation(
  db: Db,
  { endpointId, windowStart, limit }: { endpointId: string; windowStart: Date; limit: number },
): Promise<boolean> {
  const taken = await db
    .insertInto('webhook_endpoint_operation_counters')
    .values({ endpoint_id: endpointId, window_start: windowStart, used: 1 })
    .onConflict((conflict) =>
      conflict
        .columns(['endpoint_id', 'window_start'])
        .doUpdateSet((eb) => ({ used: eb('webhook_endpoint_operation_counters.used', '+', 1) }))
        .where('webhook_endpoint_operation_counters.used', '<', limit),
    )
    .returning('used')
    .executeTakeFirst();
  return taken !== undefined;
}

/** Deletes the endpoint and, by cascade, its deliveries and their attempts; false when it was not the merchant's. */
export async function deleteWebhookEndpoint(db: Db, merchantId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return result.numDeletedRows === 1n;
}

/** The merchant's enabled endpoints subscribed to `eventType`: where an event of that type goes. */
export async function listSubscribedEndpoints(
  db: Db,
  merchantId: string,
  eventType: string,
): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('enabled', '=', true)
    .where(sql<boolean>`${eventType} = ANY(events)`)
    .orderBy('created_at')
    .execute();
}
