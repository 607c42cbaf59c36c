import { normaliseDecimal } from '../money/baseUnits';
import type { Db } from '../db/client';

/**
 * The notable events of the running stack as one line each, for the `npm start` terminal (the full
 * logs go to .dev/logs/): a session changed status, a webhook was delivered, the paymaster sponsored
 * (or refused) an operation. Read from Postgres, where each of them is recorded, so the line appears
 * whichever process did the work.
 */
export interface StackEventWatcher {
  /** Reads what happened since the last call and prints it; the first call only marks the start. */
  poll(): Promise<void>;
  stop(): void;
}

const LOOK_BACK_MS = 60_000;

export function watchStackEvents({
  db,
  print,
  intervalMs = 1000,
}: {
  db: Db;
  print: (line: string) => void;
  intervalMs?: number;
}): StackEventWatcher {
  // Rows written from here on are news; what was there before this start is not.
  const start = Date.now();
  const statuses = new Map<string, string>();
  const seen = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function poll(): Promise<void> {
    // A row's time is set before its transaction commits: look a minute back and skip what was printed.
    const since = new Date(Math.max(start, Date.now() - LOOK_BACK_MS));
    const [sessions, attempts, usage] = await Promise.all([
      db
        .selectFrom('sessions')
        .select(['id', 'status', 'amount', 'sandbox_mode', 'updated_at'])
        .where('updated_at', '>', since)
        .orderBy('updated_at')
        .execute(),
      db
        .selectFrom('webhook_delivery_attempts as attempt')
        .innerJoin('webhook_deliveries as delivery', 'delivery.id', 'attempt.delivery_id')
        .innerJoin('webhook_endpoints as endpoint', 'endpoint.id', 'delivery.endpoint_id')
        .innerJoin('events as event', 'event.id', 'delivery.event_id')
        .select([
          'attempt.id',
          'attempt.attempt_number',
          'attempt.outcome',
          'attempt.status_code',
          'attempt.latency_ms',
          'endpoint.url',
          'event.type',
          'event.session_id',
        ])
        .where('attempt.attempted_at', '>', since)
        .orderBy('attempt.attempted_at')
        .execute(),
      db
        .selectFrom('paymaster_usage')
        .select(['id', 'status', 'chain_id', 'sender', 'client_id', 'method', 'reason'])
        .where('created_at', '>', since)
        .orderBy('created_at')
        .execute(),
    ]);
    for (const session of sessions) {
      const before = statuses.get(session.id);
      if (before === session.status) continue;
      statuses.set(session.id, session.status);
      const mode = session.sandbox_mode ? 'sandbox' : 'live';
      print(
        before
          ? `session ${session.id} ${before} → ${session.status}`
          : `session ${session.id} ${session.status} (${normaliseDecimal(session.amount)} USD, ${mode})`,
      );
    }
    for (const attempt of attempts) {
      if (seen.has(attempt.id)) continue;
      seen.add(attempt.id);
      const how = attempt.status_code ? `HTTP ${attempt.status_code}` : attempt.outcome;
      print(
        attempt.outcome === 'succeeded'
          ? `webhook ${attempt.type} of session ${attempt.session_id} delivered to ${attempt.url} (${how}, ${attempt.latency_ms} ms)`
          : `webhook ${attempt.type} of session ${attempt.session_id} attempt ${attempt.attempt_number} to ${attempt.url} failed (${how})`,
      );
    }
    for (const row of usage) {
      if (seen.has(row.id)) continue;
      seen.add(row.id);
      const where = `${row.sender ?? 'unknown sender'} on chain ${row.chain_id ?? '?'} (client ${row.client_id})`;
      if (row.status === 'submitted') print(`paymaster sponsored an operation of ${where}`);
      else if (row.status.startsWith('denied_'))
        print(`paymaster refused ${row.method ?? 'a request'} of ${where}: ${row.status}`);
    }
  }

  const tick = () => {
    if (stopped) return;
    poll()
      .catch((error: unknown) => print(`event watch failed: ${(error as Error).message}`))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, intervalMs);

  return {
    poll,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
