import { Kysely, PostgresDialect } from 'kysely';
import { Pool, types } from 'pg';
import type { Database } from './schema';

// NUMERIC (1700) and INT8 (20) arrive as strings: money and gas stay exact, never floats.
types.setTypeParser(1700, (value) => value);
types.setTypeParser(20, (value) => value);

export type Db = Kysely<Database>;

/** The pg pool under each Db made by createDb: db/preparedStatements.ts runs named statements on it. */
const poolsOfDbs = new WeakMap<Db, Pool>();

/** The pool a Db made by createDb runs on; undefined for any other Db (a transaction, a test's own). */
export function poolOf(db: Db): Pool | undefined {
  return poolsOfDbs.get(db);
}

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
  /**
   * Called for errors of connections that are not running a query: idle in the pool, or checked out
   * between the statements of a transaction (a restarted or stopping server: "terminating connection
   * due to administrator command"). They must never crash the process.
   */
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
  // A connection dropping (server restart or shutdown, network) while no query runs on it is an 'error'
  // event on its client; unhandled, it would crash the process. The pool listens only while the client
  // is idle in it, not while it is checked out between the statements of a transaction (awaiting
  // application code), so every client gets a listener of its own; its next query then fails and the
  // client is released as broken. The pool's own 'error' repeats what that listener already reported.
  pool.on('connect', (client) => client.on('error', (error) => onIdleError?.(error)));
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  poolsOfDbs.set(db, pool);
  return db;
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
