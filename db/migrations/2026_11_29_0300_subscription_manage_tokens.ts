import { sql, type Kysely } from 'kysely';

/**
 * `subscriptions.manage_token_hash`: SHA-256 (hex) of the customer's manage link token (issue 42: "the
 * customer cancels from a manage link"). The token itself is shown once, in the subscribe answer, and never
 * stored. Null on rows written before it (their customers cancel by revoking the permission on chain).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('subscriptions').addColumn('manage_token_hash', 'text').execute();
  await sql`create unique index subscriptions_manage_token_hash_key on subscriptions (manage_token_hash)
    where manage_token_hash is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists subscriptions_manage_token_hash_key`.execute(db);
  await db.schema.alterTable('subscriptions').dropColumn('manage_token_hash').execute();
}
