/**
 * A period's charge is due by chain time, never by the worker's clock (issue 42): the enforcer grants a
 * period's allowance only in a block stamped at or after the period's start, and the chain's latest block
 * trails our clock by a few seconds (a block time, more when the sequencer is slow). A charge that read the
 * allowance a second early would find the previous period's (already charged) and report a failure that
 * waits a day; so before it reads anything the charge waits here, heartbeating, for such a block.
 */

export interface ChainTimeWaitDetails {
  /** Unix seconds: the latest block's time. */
  chainTime: string;
  /** Unix seconds: the time the period begins on chain. */
  periodStart: string;
}

export interface ChainTimeWaitOptions {
  /** Unix seconds the latest block must be stamped at or after. */
  periodStart: bigint;
  /** Stops waiting (answers undefined) after this many milliseconds of the worker's clock. */
  maxWaitMs: number;
  pollMs: number;
  /** Called on every read that found the chain behind (the activity's heartbeat). */
  heartbeat: (details: ChainTimeWaitDetails) => void;
  sleep: (ms: number) => Promise<void>;
  now?: () => number;
}

/** The latest block's time once it is at or after `periodStart`; undefined when the chain did not get there in time. */
export async function awaitPeriodOnChain(
  client: { getBlock(args: { blockTag: 'latest' }): Promise<{ timestamp: bigint }> },
  { periodStart, maxWaitMs, pollMs, heartbeat, sleep, now = () => Date.now() }: ChainTimeWaitOptions,
): Promise<bigint | undefined> {
  const deadline = now() + maxWaitMs;
  for (;;) {
    const { timestamp } = await client.getBlock({ blockTag: 'latest' });
    if (timestamp >= periodStart) return timestamp;
    heartbeat({ chainTime: timestamp.toString(), periodStart: periodStart.toString() });
    if (now() >= deadline) return undefined;
    await sleep(pollMs);
  }
}
