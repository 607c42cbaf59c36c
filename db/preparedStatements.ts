import { CompiledQuery } from 'kysely';
import { type Db, poolOf } from './client';

/**
 * Hot statements as plain SQL run as pg named prepared statements: Postgres parses and plans each one
 * once per connection, and the api skips Kysely's compile and executor per call (the paymaster's two
 * statements per signed answer showed both in its profile, docs/performance.md "Paymaster"). `Row` is
 * what the statement's SELECT list returns, with pg's parsers applied (NUMERIC and INT8 as strings,
 * db/client.ts); `Values` are its `$n` parameters in order.
 */
export interface PreparedStatement<Row, Values extends readonly unknown[]> {
  /** Unique per text: pg keeps one prepared statement per name and connection. */
  readonly name: string;
  readonly text: string;
  /** Only for typing: `Row` and `Values` are carried by the statement. */
  readonly _types?: { row: Row; values: Values };
}

export function preparedStatement<Row, Values extends readonly unknown[]>(
  name: string,
  text: string,
): PreparedStatement<Row, Values> {
  return { name, text };
}

/**
 * Runs the statement on the Db's pool as a named statement; a Db without a pool of its own (a
 * transaction) runs the same text through Kysely, unprepared, on its connection.
 */
export async function runPrepared<Row, Values extends readonly unknown[]>(
  db: Db,
  statement: PreparedStatement<Row, Values>,
  values: Values,
): Promise<Row[]> {
  const pool = poolOf(db);
  if (!pool) {
    const { rows } = await db.executeQuery<Row>(CompiledQuery.raw(statement.text, [...values]));
    return rows;
  }
  const { rows } = await pool.query<Row & object>({
    name: statement.name,
    text: statement.text,
    values: [...values],
  });
  return rows;
}
