import { createDepositAddressFilter, type DepositAddressFilter } from '../chain/depositAddressFilter';
import type { Db } from '../db/client';
import { findWatchChangesSince, streamWatchedDepositAddresses } from '../db/deposits';

/**
 * The worker's filters of watched deposit addresses, one per chain the monitor reads unfiltered
 * (docs/decisions.md, "Deposit address filter"). Before each range's match the chain's filter reads the
 * options that entered or changed in the watch since its last read (`watch_changed_at` at or after the
 * horizon that read left), so an option committed before the range's logs were fetched — and a payment
 * can only follow its address's commit — is in the filter when the range's recipients pass through it.
 * Built on first use, page by page; rebuilt in the background every `rebuildAfterMs` (or once past its
 * capacity), so addresses whose sessions left the late window fall out. Reads and rebuilds of one chain
 * are serialised; a rebuild's filter replaces the old one once it is complete.
 */
export interface DepositAddressFilters {
  /**
   * The recipients (lower-case) that may be watched deposit addresses on `chainId`: the others are
   * certainly not. Refreshes the chain's filter first (builds it on first use).
   */
  candidates(chainId: number, expiringAfter: Date, recipients: string[]): Promise<string[]>;
  /** Builds the chain's filter anew from the watched set (what the periodic rebuild does) and swaps it in. */
  rebuild(chainId: number, expiringAfter: Date): Promise<void>;
  /** Whether the chain's filter lets `address` through as it stands (no refresh); undefined before a build. */
  mightContain(chainId: number, address: string): boolean | undefined;
  /** The chain's filter as it stands: addresses added, capacity, bytes, and when it was built. */
  describe(chainId: number): { added: number; capacity: number; bytes: number; builtAt: number } | undefined;
}

export interface DepositAddressFilterOptions {
  db: Db;
  /**
   * The least overlap of each read of changes with the previous one (default 60 s): beyond the open
   * transactions Postgres shows, it covers backends this role cannot see and a server clock stepping back.
   */
  overlapMs?: number;
  /** How often a chain's filter is rebuilt (default 1 hour): addresses that left the window fall out. */
  rebuildAfterMs?: number;
  logger?: { warn(object: object, message: string): void };
}

export const DEFAULT_FILTER_OVERLAP_MS = 60_000;
export const DEFAULT_FILTER_REBUILD_MS = 3_600_000;

interface ChainFilter {
  filter: DepositAddressFilter;
  /** Read changes stamped at or after this (Postgres timestamptz text). */
  horizon: string;
  builtAt: number;
}

export function createDepositAddressFilters({
  db,
  overlapMs = DEFAULT_FILTER_OVERLAP_MS,
  rebuildAfterMs = DEFAULT_FILTER_REBUILD_MS,
  logger,
}: DepositAddressFilterOptions): DepositAddressFilters {
  const chains = new Map<number, ChainFilter>();
  const rebuilding = new Map<number, Promise<void>>();
  const queues = new Map<number, Promise<unknown>>();

  /** Runs `task` after the chain's previous task ends (whether it failed or not). */
  const serial = <T>(chainId: number, task: () => Promise<T>): Promise<T> => {
    const run = (queues.get(chainId) ?? Promise.resolve()).then(task, task);
    queues.set(
      chainId,
      run.catch(() => undefined),
    );
    return run;
  };

  const build = async (chainId: number, expiringAfter: Date): Promise<ChainFilter> => {
    const builtAt = Date.now();
    let filter: DepositAddressFilter | undefined;
    const { horizon } = await streamWatchedDepositAddresses(db, {
      chainId,
      expiringAfter,
      overlapMs,
      start: (expected) => {
        filter = createDepositAddressFilter(expected);
        return (addresses) => {
          for (const address of addresses) filter!.add(address);
        };
      },
    });
    return { filter: filter!, horizon, builtAt };
  };

  const rebuild = async (chainId: number, expiringAfter: Date) => {
    const fresh = await build(chainId, expiringAfter);
    // Complete before it replaces the old one: its horizon makes the next read take what it missed.
    chains.set(chainId, fresh);
  };

  const rebuildInBackground = (chainId: number, expiringAfter: Date) => {
    if (rebuilding.has(chainId)) return;
    const done = rebuild(chainId, expiringAfter)
      .catch((error: Error) =>
        logger?.warn(
          { chainId, error: error.message },
          'deposit address filter rebuild failed; retried later',
        ),
      )
      .finally(() => rebuilding.delete(chainId));
    rebuilding.set(chainId, done);
  };

  return {
    candidates(chainId, expiringAfter, recipients) {
      return serial(chainId, async () => {
        let chain = chains.get(chainId);
        if (!chain) {
          chain = await build(chainId, expiringAfter);
          chains.set(chainId, chain);
        } else if (
          Date.now() - chain.builtAt >= rebuildAfterMs ||
          chain.filter.added >= chain.filter.capacity
        ) {
          rebuildInBackground(chainId, expiringAfter);
        }
        const changes = await findWatchChangesSince(db, {
          chainId,
          since: chain.horizon,
          expiringAfter,
          overlapMs,
        });
        // Added before the horizon moves: a read from the new horizon relies on these being in.
        for (const address of changes.addresses) chain.filter.add(address);
        chain.horizon = changes.horizon;
        return recipients.filter((recipient) => chain.filter.mightContain(recipient));
      });
    },
    rebuild(chainId, expiringAfter) {
      return serial(chainId, () => rebuild(chainId, expiringAfter));
    },
    mightContain(chainId, address) {
      return chains.get(chainId)?.filter.mightContain(address.toLowerCase());
    },
    describe(chainId) {
      const chain = chains.get(chainId);
      if (!chain) return undefined;
      const { added, capacity, bytes } = chain.filter;
      return { added, capacity, bytes, builtAt: chain.builtAt };
    },
  };
}
