import { sql, type Kysely } from 'kysely';

/**
 * E-mail login (docs/decisions.md "Merchant accounts"): a profile e-mail becomes a login e-mail once verified (unique across
 * merchants among verified ones); one-time codes, stored as an HMAC, one live code per purpose and
 * subject (a new code replaces the old; a login code for an unknown address has no merchant and is
 * never mailed); hourly counters that cap the codes mailed per address and per IP.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('merchants').addColumn('email_verified_at', 'timestamptz').execute();
  await sql`
    CREATE UNIQUE INDEX merchants_verified_email_key ON merchants (lower(email))
    WHERE email_verified_at IS NOT NULL
  `.execute(db);

  await db.schema
    .createTable('email_codes')
    .addColumn('purpose', 'text', (col) => col.notNull().check(sql`purpose IN ('login', 'verify_email')`))
    .addColumn('subject', 'text', (col) => col.notNull())
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('merchant_id', 'uuid', (col) => col.references('merchants.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addPrimaryKeyConstraint('email_codes_pkey', ['purpose', 'subject'])
    .execute();
  await db.schema.createIndex('email_codes_expires_at_idx').on('email_codes').column('expires_at').execute();

  await db.schema
    .createTable('email_code_counters')
    .addColumn('counter_key', 'text', (col) => col.notNull())
    .addColumn('window_start', 'timestamptz', (col) => col.notNull())
    .addColumn('used', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('email_code_counters_pkey', ['counter_key', 'window_start'])
    .execute();
  await db.schema
    .createIndex('email_code_counters_window_start_idx')
    .on('email_code_counters')
    .column('window_start')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('email_code_counters').execute();
  await db.schema.dropTable('email_codes').execute();
  await sql`DROP INDEX merchants_verified_email_key`.execute(db);
  await db.schema.alterTable('merchants').dropColumn('email_verified_at').execute();
}
