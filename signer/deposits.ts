import type { Address, PublicClient } from 'viem';
import { entryPointAbi } from '../chain/entryPoints';

/**
 * The paymasters' EntryPoint deposits, read once per block instead of once per signature. A watcher per
 * chain polls `eth_blockNumber` every HEAD_POLL_MS; a deposit read at the head it knows is reused until
 * the head moves (and never for longer than MAX_REUSE_MS, should the watcher stall), so a deposit is at
 * most one poll behind the chain — the value every signature in the same block would have read anyway.
 * While the head cannot be read, every signature reads the deposit itself, as before. A failed read is
 * never reused. The caller re-reads with `fresh` before denying on a cached value (a top-up in the
 * newest block must not be denied on an older figure); nothing is signed beyond a deposit known to be
 * insufficient.
 */

export const HEAD_POLL_MS = 250;
export const MAX_REUSE_MS = 2_000;

export interface PaymasterDeposits {
  /** The paymaster's deposit on the EntryPoint (throws what `read` throws). */
  current(
    chainId: number,
    entryPoint: Address,
    paymaster: Address,
    options?: { fresh?: boolean },
  ): Promise<bigint>;
  stop(): void;
}

interface Head {
  /** Undefined while the head is unknown (not read yet, or the last read failed). */
  number: bigint | undefined;
  timer: NodeJS.Timeout;
}

export function createPaymasterDeposits({
  publicClientFor,
  read = readDeposit,
  pollMs = HEAD_POLL_MS,
  now = () => Date.now(),
}: {
  publicClientFor(chainId: number): PublicClient | undefined;
  read?: (client: PublicClient, entryPoint: Address, paymaster: Address) => Promise<bigint>;
  pollMs?: number;
  now?: () => number;
}): PaymasterDeposits {
  const heads = new Map<number, Head>();
  const cached = new Map<string, { head: bigint; at: number; reading: Promise<bigint> }>();

  const watch = (chainId: number, client: PublicClient): Head => {
    const existing = heads.get(chainId);
    if (existing) return existing;
    let polling = false;
    const poll = async () => {
      if (polling) return;
      polling = true;
      try {
        head.number = await client.getBlockNumber({ cacheTime: 0 });
      } catch {
        head.number = undefined;
      } finally {
        polling = false;
      }
    };
    const head: Head = { number: undefined, timer: setInterval(() => void poll(), pollMs) };
    head.timer.unref();
    heads.set(chainId, head);
    void poll();
    return head;
  };

  return {
    async current(chainId, entryPoint, paymaster, { fresh = false } = {}) {
      const client = publicClientFor(chainId);
      if (!client) throw new Error(`no RPC for chain ${chainId}`);
      const head = watch(chainId, client).number;
      const key = `${chainId}:${entryPoint}:${paymaster}`;
      const entry = cached.get(key);
      if (!fresh && head !== undefined && entry && entry.head === head && now() - entry.at < MAX_REUSE_MS)
        return entry.reading;
      const reading = read(client, entryPoint, paymaster);
      if (head !== undefined) {
        const stored = { head, at: now(), reading };
        cached.set(key, stored);
        reading.catch(() => {
          if (cached.get(key) === stored) cached.delete(key);
        });
      }
      return reading;
    },
    stop() {
      for (const head of heads.values()) clearInterval(head.timer);
      heads.clear();
      cached.clear();
    },
  };
}

export function readDeposit(client: PublicClient, entryPoint: Address, paymaster: Address): Promise<bigint> {
  return client.readContract({
    address: entryPoint,
    abi: entryPointAbi,
    functionName: 'balanceOf',
    args: [paymaster],
  });
}
