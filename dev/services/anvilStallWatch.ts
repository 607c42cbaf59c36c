/**
 * A watch on one automining anvil: when ready transactions wait in its pool and no block comes, it mines one.
 *
 * Why: anvil's automine can leave a ready transaction out of its blocks when same-sender transactions arrive
 * out of nonce order (foundry-rs/foundry#10122); with nothing more sent, no block comes and every receipt wait
 * on it runs to its timeout (seen in loaded CI runs: fixtures waiting 180 s). An empty block takes such a
 * straggler in. Watching the chain instead of each client covers every waiter at once: the tests' clients,
 * the deployer's and the worker's.
 *
 * It stays out of the way of tests that turn automine off to hold a transaction in the pool, and it never
 * mines while the pool is empty. When it sees something held it writes one line saying what (once per pool
 * state), so a stall of another kind (a nonce gap, which no block cures) leaves its evidence in the run's log.
 */

/** Between two looks at the pool: a ready transaction held across two looks has waited at least this long. */
export const STALL_WATCH_INTERVAL_MS = 2_000;

export interface AnvilStallWatch {
  stop(): void;
  /** Blocks this watch has mined to take held transactions in. */
  readonly nudges: number;
}

export function watchAnvilForStalls(
  rpcUrl: string,
  {
    intervalMs = STALL_WATCH_INTERVAL_MS,
    report = (line: string) => process.stderr.write(`${line}\n`),
  }: { intervalMs?: number; report?: (line: string) => void } = {},
): AnvilStallWatch {
  /** The block number at the last look, when that look saw transactions in the pool with automine on. */
  let seenWaitingAt: string | undefined;
  let nudges = 0;
  let stopped = false;
  let looking = false;
  let lastReport = '';

  const look = async () => {
    if (looking) return;
    looking = true;
    try {
      const [automine, status, blockNumber] = await Promise.all([
        rpc<boolean>(rpcUrl, 'anvil_getAutomine'),
        rpc<{ pending: string; queued: string }>(rpcUrl, 'txpool_status'),
        rpc<string>(rpcUrl, 'eth_blockNumber'),
      ]);
      const pending = Number(status.pending);
      const waiting = automine && pending + Number(status.queued) > 0;
      const held = waiting && seenWaitingAt === blockNumber;
      seenWaitingAt = waiting ? blockNumber : undefined;
      if (!held || stopped) return;
      const inspect = await rpc<Record<string, Record<string, Record<string, string>>>>(
        rpcUrl,
        'txpool_inspect',
      );
      const mine = pending > 0;
      const line = `[anvil ${rpcUrl}] no block for ${intervalMs} ms with ${describePool(inspect)}${
        mine ? ': mined one to take the ready ones in (foundry-rs/foundry#10122)' : ''
      }`;
      if (line !== lastReport) report(line);
      lastReport = line;
      if (mine) {
        await rpc(rpcUrl, 'evm_mine');
        nudges++;
        seenWaitingAt = undefined;
      }
    } catch {
      // The chain is stopping or busy; the next look decides.
    } finally {
      looking = false;
    }
  };

  const timer = setInterval(() => void look(), intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
    get nudges() {
      return nudges;
    },
  };
}

/** "2 ready (0xf39f…: nonces 7, 8), 1 queued (0x7099…: nonce 12)" from anvil's txpool_inspect. */
function describePool(inspect: Record<string, Record<string, Record<string, string>>>): string {
  const part = (name: string, bySender: Record<string, Record<string, string>> = {}) => {
    const senders = Object.entries(bySender).map(
      ([sender, byNonce]) => `${sender}: nonces ${Object.keys(byNonce).join(', ')}`,
    );
    const count = Object.values(bySender).reduce((sum, byNonce) => sum + Object.keys(byNonce).length, 0);
    return `${count} ${name}${senders.length > 0 ? ` (${senders.join('; ')})` : ''}`;
  };
  return `${part('ready', inspect.pending)}, ${part('queued', inspect.queued)}`;
}

async function rpc<T>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
