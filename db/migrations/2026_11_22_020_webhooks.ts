import { sql, type Kysely } from 'kysely';

/**
 * Webhooks (docs/decisions.md "Webhooks"): merchant endpoints with their encrypted signing secrets, events stored
 * once with their exact payload, and deliveries (one per delivery workflow run) with every attempt.
 * Deleting an endpoint deletes its deliveries and their attempts (SPEC: delivery history deleted too).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('events', sql`text[]`, (col) => col.notNull())
    .addColumn('enabled', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('secret_ciphertext', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('webhook_endpoints_events_check', sql`cardinality(events) > 0`)
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_merchant_idx')
    .on('webhook_endpoints')
    .columns(['merchant_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('session_id', 'uuid', (col) => col.notNull().references('sessions.id').onDelete('cascade'))
    // The serialised body, byte for byte what is signed and sent (text, not jsonb, which would reformat it).
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addCheckConstraint('events_id_check', sql`id ~ '^evt_[0-9a-f-]{36}$'`)
    // One event of each type per session: a replayed activity finds the first one.
    .addUniqueConstraint('events_session_type_key', ['session_id', 'type'])
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('merchant_id', 'uuid', (col) => col.notNull().references('merchants.id').onDelete('cascade'))
    .addColumn('endpoint_id', 'uuid', (col) =>
      col.notNull().references('webhook_endpoints.id').onDelete('cascade'),
    )
    .addColumn('event_id', 'text', (col) => col.notNull().references('events.id').onDelete('cascade'))
    .addColumn('workflow_id', 'text', (col) => col.notNull())
    .addColumn('workflow_run_id', 'text', (col) => col.notNull().unique())
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('pending'))
    .addColumn('attempt_count', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'webhook_deliveries_status_check',
      sql`status IN ('pending', 'succeeded', 'failed', 'canceled')`,
    )
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_endpoint_idx')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'created_at desc'])
    .execute();

  await db.schema
    .createTable('webhook_delivery_attempts')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('delivery_id', 'uuid', (col) =>
      col.notNull().references('webhook_deliveries.id').onDelete('cascade'),
    )
    .addColumn('attempt_number', 'integer', (col) => col.notNull())
    .addColumn('attempted_at', 'timestamptz', (col) => col.notNull())
    .addColumn('outcome', 'text', (col) => col.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (col) => col.notNull())
    .addColumn('response_body', 'text')
    .addColumn('error', 'text')
    .addCheckConstraint(
      'webhook_delivery_attempts_outcome_check',
      sql`outcome IN ('succeeded', 'http_error', 'timeout', 'network_error', 'blocked_address')`,
    )
    // A retried recording activity writes the same attempt once.
    .addUniqueConstraint('webhook_delivery_attempts_number_key', ['delivery_id', 'attempt_number'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_delivery_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('events').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}
