/**
 * When a monitor waiting for a chain's next block should ask for the head (docs/decisions.md, "Adaptive
 * head polling"). A fixed poll asks every `headPollMs` (4 a second, 48 per 12 s Ethereum block). A chain
 * whose blocks come at a steady interval is asked when its next block can first be there, then every
 * `fastPollMs` until it is: about two requests per block whatever the interval, and the block seen within
 * `fastPollMs` of its arrival (a fixed poll: within `headPollMs`).
 *
 * The interval is learned from the timestamps of the blocks the monitor scans (exact, unlike poll times);
 * the phase from the polls themselves: a block arrived after the last poll that did not see it (sent at)
 * and before the first that did (answered at), so the next one arrives in that window plus the interval.
 * The first poll is at its start, so on a steady chain it never comes after the block.
 *
 * Adaptive only while the chain keeps to it: `regularBlocks` single-block steps in a row, each arriving when
 * the interval says, with equal timestamp gaps. A block seen at the first poll after a wait (it came
 * early: faster blocks, or mined by hand), one seen later than its window (slower, or the chain stopped),
 * several at once or an uneven timestamp gap end it: fixed polling again until the chain is steady for
 * `regularBlocks` more. Only when to ask changes: a scan still covers every block from its checkpoint to
 * the safe head, so a mistaken estimate delays a block (by at most the interval), never skips one.
 */
export interface HeadCadenceOptions {
  /** The fixed poll, used until the chain is steady and whenever it is not (default 250 ms). */
  headPollMs: number;
  /** The poll inside the window where the next block is due (default 50 ms, at most headPollMs). */
  fastPollMs?: number;
  /** Steady blocks in a row before polling adapts (default 4). */
  regularBlocks?: number;
}

/** Slack for timer and clock jitter when judging whether a block came when it was due. */
const TOLERANCE_MS = 25;
/** Block timestamps are whole seconds. */
const TIMESTAMP_RESOLUTION_MS = 1_000;

export class HeadCadence {
  private readonly headPollMs: number;
  private readonly fastPollMs: number;
  private readonly regularBlocks: number;
  /** The latest head a poll answered, and the window its block arrived in: (arrivedAfter, seenAt]. */
  private head: bigint | undefined;
  private arrivedAfter = 0;
  private seenAt = 0;
  /** When the latest poll that did not see `head + 1` was sent. */
  private lastMissAt: number | undefined;
  /** Whether the next poll ends a wait for the window's start (a block it sees came early). */
  private wokeForWindow = false;
  /** Per-block timestamp gaps (ms) of the blocks scanned, latest last; and the last block noted. */
  private gaps: number[] = [];
  private lastTimed: { block: bigint; time: number } | undefined;
  /** Steady single-block steps in a row. */
  private streak = 0;

  constructor({ headPollMs, fastPollMs = 50, regularBlocks = 4 }: HeadCadenceOptions) {
    this.headPollMs = headPollMs;
    this.fastPollMs = Math.min(fastPollMs, headPollMs);
    this.regularBlocks = regularBlocks;
  }

  /**
   * The chain's block interval while its timestamps are steady: the mean of the last `regularBlocks` gaps,
   * each within a timestamp's resolution (1 s) of it (anvil and the chains stamp whole seconds, so a 1 s chain
   * whose blocks straddle a second shows gaps of 0 or 2 now and then).
   */
  get intervalMs(): number | undefined {
    if (this.gaps.length < this.regularBlocks) return undefined;
    const mean = this.gaps.reduce((sum, gap) => sum + gap, 0) / this.gaps.length;
    return mean > 0 && this.gaps.every((gap) => Math.abs(gap - mean) <= TIMESTAMP_RESOLUTION_MS)
      ? mean
      : undefined;
  }

  /** Whether polls are timed by the learned interval (else every headPollMs). */
  get adaptive(): boolean {
    const interval = this.intervalMs;
    // Polls at headPollMs already ask fewer than four times a block on a chain this fast.
    return interval !== undefined && interval >= 2 * this.headPollMs && this.streak >= this.regularBlocks;
  }

  /** The latest head a poll answered, while the chain is steady and its next block not due yet (else undefined). */
  currentHead(now: number): bigint | undefined {
    return this.adaptive && now < this.arrivedAfter + this.intervalMs! ? this.head : undefined;
  }

  /** A scanned block's timestamp (the monitor reads it for every range it scans). */
  noteBlockTime(block: bigint, time: Date): void {
    const at = time.getTime();
    const last = this.lastTimed;
    if (last && block <= last.block) return;
    this.lastTimed = { block, time: at };
    if (!last) return;
    this.gaps = [...this.gaps, (at - last.time) / Number(block - last.block)].slice(-this.regularBlocks);
    if (this.intervalMs === undefined) this.streak = 0;
  }

  /**
   * A head poll's answer: `sentAt` when it was asked, `answeredAt` when it answered (a block it does not
   * see came after `sentAt`; one it sees came before `answeredAt`).
   */
  notePoll(head: bigint, sentAt: number, answeredAt: number): void {
    const wokeForWindow = this.wokeForWindow;
    this.wokeForWindow = false;
    if (this.head === undefined || head < this.head) {
      // The first answer (or a node behind the last one): its block's window is unknown, the fixed poll's.
      this.head = head;
      this.arrivedAfter = sentAt - this.headPollMs;
      this.seenAt = answeredAt;
      this.lastMissAt = undefined;
      this.streak = 0;
      return;
    }
    if (head === this.head) {
      this.lastMissAt = sentAt;
      return;
    }
    const interval = this.intervalMs;
    if (
      wokeForWindow &&
      head === this.head + 1n &&
      interval !== undefined &&
      answeredAt >= this.arrivedAfter + interval + TOLERANCE_MS
    ) {
      // Seen by a wake-up that came late (a loaded machine's timer): when the block came is unknown, so this
      // step neither counts as steady nor ends the streak, and the next window is this one's, an interval on.
      this.head = head;
      this.arrivedAfter += interval;
      this.seenAt = Math.min(this.seenAt + interval, answeredAt);
      this.lastMissAt = undefined;
      return;
    }
    const arrivedAfter = this.lastMissAt ?? sentAt - this.headPollMs;
    // The gap between the two blocks' arrivals lies between these; steady when the interval does too.
    const shortest = arrivedAfter - this.seenAt;
    const longest = answeredAt - this.arrivedAfter;
    const steady =
      head === this.head + 1n &&
      !wokeForWindow &&
      interval !== undefined &&
      interval >= shortest - TOLERANCE_MS &&
      interval <= longest + TOLERANCE_MS;
    this.streak = steady ? this.streak + 1 : 0;
    this.head = head;
    this.arrivedAfter = arrivedAfter;
    this.seenAt = answeredAt;
    this.lastMissAt = undefined;
  }

  /** How long to wait, from `now`, before asking for the head again. */
  nextPollDelay(now: number): number {
    if (!this.adaptive) return this.headPollMs;
    const interval = this.intervalMs!;
    const opens = this.arrivedAfter + interval;
    const closes = this.seenAt + interval;
    if (now < opens) {
      // The first poll at the window's start: on a steady chain the block is not there yet.
      this.wokeForWindow = true;
      return opens - now;
    }
    if (now <= closes + this.headPollMs) return this.fastPollMs;
    // Later than its window: slower blocks or a stopped chain; fixed polling until it is steady again.
    this.streak = 0;
    return this.headPollMs;
  }
}
