import { Kysely, PostgresDialect } from 'kysely';
import { Pool, types } from 'pg';
import type { Database } from './schema';

// NUMERIC (1700) and INT8 (20) arrive as strings: money and gas stay exact, never floats.
types.setTypeParser(1700, (value) => value);
types.setTypeParser(20, (value) => value);

export type Db = Kysely<Database>;

export interface CreateDbOptions {
  connectionString: string;
  maxConnections?: number;
  /**
   * Bounded waits (the api and worker set them from config; unset means unbounded, for migrations and
   * tools): a free connection within `acquireTimeoutMs`; every statement within `statementTimeoutMs`
   * (server side, and on the client 1 s later for a server that no longer answers at all); a transaction
   * left idle is rolled back by the server after `idleInTransactionTimeoutMs`.
   */
  acquireTimeoutMs?: number;
  statementTimeoutMs?: number;
  idleInTransactionTimeoutMs?: number;
  /** Called for errors of idle pooled connections (a restarted server); they must never crash the process. */
  onIdleError?: (error: Error) => void;
}

/** A Kysely instance over a pg pool; the caller owns it and calls `destroy()`. */
export function createDb({
  connectionString,
  maxConnections = 10,
  acquireTimeoutMs,
  statementTimeoutMs,
  idleInTransactionTimeoutMs,
  onIdleError,
}: CreateDbOptions): Db {
  const pool = new Pool({
    connectionString,
    max: maxConnections,
    ...(acquireTimeoutMs !== undefined && { connectionTimeoutMillis: acquireTimeoutMs }),
    ...(statementTimeoutMs !== undefined && {
      statement_timeout: statementTimeoutMs,
      query_timeout: statementTimeoutMs + 1_000,
    }),
    ...(idleInTransactionTimeoutMs !== undefined && {
      idle_in_transaction_session_timeout: idleInTransactionTimeoutMs,
    }),
  });
  // An idle client's connection dropping (server restart, network) is reported here; unhandled, it
  // would be an uncaught 'error' event. The pool replaces the client on the next query.
  pool.on('error', (error) => onIdleError?.(error));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** The bounded-wait options of a process's pool, from its configuration. */
export function boundedWaitsFrom(config: {
  DATABASE_ACQUIRE_TIMEOUT_MS: number;
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: number;
}): Pick<CreateDbOptions, 'acquireTimeoutMs' | 'statementTimeoutMs' | 'idleInTransactionTimeoutMs'> {
  return {
    acquireTimeoutMs: config.DATABASE_ACQUIRE_TIMEOUT_MS,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    idleInTransactionTimeoutMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
  };
}
