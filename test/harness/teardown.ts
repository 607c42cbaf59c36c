/**
 * Global setup and teardown run in the same jest parent process; this list carries the
 * stop functions of the services the setup started from one to the other.
 */
type Stop = () => Promise<unknown>;

const key = Symbol.for('stablepay.test.teardown');
const store = globalThis as unknown as Record<symbol, Stop[] | undefined>;

export function registerTeardown(stop: Stop): void {
  (store[key] ??= []).push(stop);
}

export async function runTeardowns(): Promise<void> {
  const stops = (store[key] ?? []).reverse();
  store[key] = [];
  const results = await Promise.allSettled(stops.map((stop) => stop()));
  for (const result of results) {
    if (result.status === 'rejected') process.stderr.write(`teardown failed: ${String(result.reason)}\n`);
  }
}
