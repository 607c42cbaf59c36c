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
}

/** A Kysely instance over a pg pool; the caller owns it and calls `destroy()`. */
export function createDb({ connectionString, maxConnections = 10 }: CreateDbOptions): Db {
  return new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new Pool({ connectionString, max: maxConnections }) }),
  });
}
