/**
 * Group commit (issue 46): items that arrive while the previous batch is in flight (or in the same turn
 * of the event loop) go to Postgres together as one statement and one transaction, and each caller's
 * promise settles only when its batch has committed. One batch in flight at a time per committer (the
 * default of `maxInFlight`): a batch takes its counters' row locks once for all its items, so a second one
 * beside it would only wait on them.
 *
 * Every caller is answered, never left waiting: a batch that Postgres aborts as a deadlock (or a
 * serialization failure) is rolled back whole and sent again; a batch that fails otherwise is sent again
 * item by item (`runOne`), so an item that fails fails alone and its neighbours are recorded. An item on
 * its own (nothing else waiting) goes through `runOne` too: its single statement is the cheaper one.
 *
 * The signing service's client (paymaster/rpc/signerClient.ts) groups its requests the same way: its
 * `runBatch` never throws (a failed exchange is every item's answer), and it bounds a batch's bytes too.
 */
export interface GroupCommitOptions<I, R> {
  /** One result per item, in the items' order, committed together. */
  runBatch: (items: readonly I[]) => Promise<R[]>;
  runOne: (item: I) => Promise<R>;
  /** At most this many items per batch (the rest wait for the next). */
  maxBatch: number;
  /**
   * With `maxBatchBytes`: a batch holds items while their `bytesOf` add up to at most that many (its
   * first item always goes, alone if it must).
   */
  bytesOf?: (item: I) => number;
  maxBatchBytes?: number;
  /** Batches in flight at once (default 1); a batch leaves as soon as fewer are. */
  maxInFlight?: number;
}

export interface GroupCommitStats {
  /** Statements sent through `runBatch` that committed, and the items they carried. */
  batches: number;
  batchedItems: number;
  /** Batches sent again whole (deadlock, serialization failure), and batches split into single items. */
  retried: number;
  split: number;
}

export interface GroupCommitter<I, R> {
  submit(item: I): Promise<R>;
  stats(): GroupCommitStats;
}

/** Postgres' deadlock_detected and serialization_failure: the whole transaction was rolled back. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_RETRIES = 3;

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export function groupCommitter<I, R>({
  runBatch,
  runOne,
  maxBatch,
  bytesOf,
  maxBatchBytes = Infinity,
  maxInFlight = 1,
}: GroupCommitOptions<I, R>): GroupCommitter<I, R> {
  const queue: Waiting<I, R>[] = [];
  let inFlight = 0;
  let scheduled = false;
  const counts: GroupCommitStats = { batches: 0, batchedItems: 0, retried: 0, split: 0 };

  const settleOne = async (waiting: Waiting<I, R>): Promise<void> => {
    try {
      waiting.resolve(await runOne(waiting.item));
    } catch (error) {
      waiting.reject(error);
    }
  };

  const runWithRetries = async (items: readonly I[]): Promise<R[]> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await runBatch(items);
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (attempt >= MAX_RETRIES || typeof code !== 'string' || !RETRYABLE.has(code)) throw error;
        counts.retried++;
      }
    }
  };

  const send = async (batch: Waiting<I, R>[]): Promise<void> => {
    if (batch.length === 1) return settleOne(batch[0]!);
    let results: R[];
    try {
      results = await runWithRetries(batch.map((waiting) => waiting.item));
      if (results.length !== batch.length) {
        throw new Error(`a batch of ${batch.length} answered ${results.length} results`);
      }
    } catch {
      // Nothing of the batch was committed (one transaction): each item on its own answers for itself.
      counts.split++;
      await Promise.all(batch.map(settleOne));
      return;
    }
    counts.batches++;
    counts.batchedItems += batch.length;
    batch.forEach((waiting, index) => waiting.resolve(results[index]!));
  };

  /** How many of the queue's first items the next batch takes: at least one, within both bounds. */
  const nextBatchLength = (): number => {
    const limit = Math.min(maxBatch, queue.length);
    if (!bytesOf) return limit;
    let bytes = bytesOf(queue[0]!.item);
    let length = 1;
    while (length < limit) {
      bytes += bytesOf(queue[length]!.item);
      if (bytes > maxBatchBytes) break;
      length++;
    }
    return length;
  };

  const flush = (): void => {
    scheduled = false;
    while (inFlight < maxInFlight && queue.length > 0) {
      inFlight++;
      const batch = queue.splice(0, nextBatchLength());
      void send(batch).finally(() => {
        inFlight--;
        // What arrived while this batch was in flight is the next batch, sent at once.
        flush();
      });
    }
  };

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (inFlight < maxInFlight && !scheduled) {
          // The rest of this turn's arrivals join it.
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    stats: () => ({ ...counts }),
  };
}
