import type { Db } from './client';

export interface EmailCodeCounter {
  /** `address:<hash>` or `ip:<address>`. */
  key: string;
  /** Codes allowed in the window. */
  limit: number;
}

/**
 * Takes one unit from each counter of the window, all or nothing: every counter is a conditional upsert
 * (the row lock serialises concurrent requests, the WHERE refuses the one that would overshoot) in the
 * caller's order, inside `db`'s transaction. Answers the first counter that refused, and then the
 * caller must roll that transaction back; undefined when all took their unit.
 */
export async function consumeEmailCodeCounters(
  db: Db,
  { counters, windowStart }: { counters: EmailCodeCounter[]; windowStart: Date },
): Promise<EmailCodeCounter | undefined> {
  for (const counter of counters) {
    const taken = await db
      .insertInto('email_code_counters')
      .values({ counter_key: counter.key, window_start: windowStart, used: 1 })
      .onConflict((conflict) =>
        conflict
          .columns(['counter_key', 'window_start'])
          .doUpdateSet((eb) => ({ used: eb('email_code_counters.used', '+', 1) }))
          .where('email_code_counters.used', '<', counter.limit),
      )
      .returning('used')
      .executeTakeFirst();
    if (!taken) return counter;
  }
  return undefined;
}

/** Deletes the counters of windows that started before `cutoff`; returns how many went. */
export async function deleteEmailCodeCountersBefore(db: Db, cutoff: Date): Promise<number> {
  const { numDeletedRows } = await db
    .deleteFrom('email_code_counters')
    .where('window_start', '<', cutoff)
    .executeTakeFirstOrThrow();
  return Number(numDeletedRows);
}
