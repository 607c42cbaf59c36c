import { sql, type Kysely } from 'kysely';

/**
 * E-mail login abuse (security review II, findings 2 and 3):
 * - several live codes per (purpose, subject): a login start no longer replaces a code already mailed
 *   (the newest few stay valid, each single use), so `email_codes` gets its own id;
 * - every wrong login code is a row of `email_code_failures` (keyed by a hash of the address), the
 *   rolling budget's count;
 * - a spent budget is a row of `email_login_lockouts` (at most one open per address), cleared when the
 *   owner signs in by wallet.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE email_codes DROP CONSTRAINT email_codes_pkey`.execute(db);
  await sql`ALTER TABLE email_codes ADD COLUMN id uuid PRIMARY KEY DEFAULT gen_random_uuid()`.execute(db);
  await db.schema
    .createIndex('email_codes_purpose_subject_idx')
    .on('email_codes')
    .columns(['purpose', 'subject', 'created_at'])
    .execute();

  await db.schema
    .createTable('email_code_failures')
    .addColumn('id', 'bigserial', (col) => col.primaryKey())
    .addColumn('address_hash', 'text', (col) => col.notNull())
    .addColumn('failed_at', 'timestamptz', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('email_code_failures_address_idx')
    .on('email_code_failures')
    .columns(['address_hash', 'failed_at'])
    .execute();

  await db.schema
    .createTable('email_login_lockouts')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('address_hash', 'text', (col) => col.notNull())
    // The merchant whose verified login e-mail it was, when there was one.
    .addColumn('merchant_id', 'uuid', (col) => col.references('merchants.id').onDelete('cascade'))
    .addColumn('failures', 'integer', (col) => col.notNull())
    .addColumn('locked_at', 'timestamptz', (col) => col.notNull())
    .addColumn('cleared_at', 'timestamptz')
    .execute();
  await sql`
    CREATE UNIQUE INDEX email_login_lockouts_open_key ON email_login_lockouts (address_hash)
    WHERE cleared_at IS NULL
  `.execute(db);
  await db.schema
    .createIndex('email_login_lockouts_merchant_idx')
    .on('email_login_lockouts')
    .column('merchant_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('email_login_lockouts').execute();
  await db.schema.dropTable('email_code_failures').execute();
  await sql`DROP INDEX email_codes_purpose_subject_idx`.execute(db);
  await sql`DELETE FROM email_codes a USING email_codes b
    WHERE a.purpose = b.purpose AND a.subject = b.subject AND a.created_at < b.created_at`.execute(db);
  await sql`ALTER TABLE email_codes DROP COLUMN id`.execute(db);
  await sql`ALTER TABLE email_codes ADD CONSTRAINT email_codes_pkey PRIMARY KEY (purpose, subject)`.execute(
    db,
  );
}
