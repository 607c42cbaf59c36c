import { setTimeout as delay } from 'node:timers/promises';

/**
 * Records when the bench first saw each block of a chain (eth_blockNumber every `intervalMs`, raw
 * JSON-RPC so no client-side cache delays it): the "included" instant of a transaction is when its
 * block first became visible here, to within one interval.
 */
export interface BlockWatcher {
  /** The newest block seen so far. */
  head(): bigint;
  /** performance.now() when `blockNumber` (or a later block) was first seen; waits for it. */
  seenAt(blockNumber: bigint, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

export async function watchBlocks(rpcUrl: string, intervalMs = 50): Promise<BlockWatcher> {
  const firstSeen = new Map<bigint, number>();
  let head = -1n;
  let stopped = false;
  let failure: unknown;

  const poll = async () => {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    });
    const { result } = (await response.json()) as { result: string };
    const seen = BigInt(result);
    const now = performance.now();
    // A jump of several blocks between polls: the skipped ones were visible by now at the latest.
    for (let block = head + 1n; block <= seen; block += 1n)
      if (!firstSeen.has(block)) firstSeen.set(block, now);
    if (seen > head) head = seen;
  };

  await poll();
  const loop = (async () => {
    while (!stopped) {
      await delay(intervalMs);
      try {
        await poll();
      } catch (error) {
        failure = error;
        return;
      }
    }
  })();

  return {
    head: () => head,
    async seenAt(blockNumber, timeoutMs = 30_000) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const at = firstSeen.get(blockNumber);
        if (at !== undefined) return at;
        if (failure) throw failure;
        if (performance.now() > deadline)
          throw new Error(`block ${blockNumber} not seen within ${timeoutMs} ms (head ${head})`);
        await delay(intervalMs / 2);
      }
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
