import type { Kysely } from 'kysely';

/**
 * The dev stack's dashboard sign-in links (security review III, finding 3): a one-time code, stored as
 * its SHA-256 only, exchanged once for a session token of its merchant before it expires (a minute
 * after issue). No route issues one: the dev stack writes the row (dev/dashboardSignInLink.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('dashboard_sign_in_codes')
    .addColumn('code_hash', 'text', (col) => col.primaryKey())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('dashboard_sign_in_codes').execute();
}
