import { HeadCadence } from './headCadence';

/**
 * A monitor's head polls against a simulated chain (arrival times in ms): each poll answers 1 ms after it
 * is sent with the blocks arrived by then, the scan notes each new block's timestamp (whole seconds, as
 * anvil and mainnet stamp them), and the next poll waits what the cadence says. Per block: when a poll
 * first saw it, and how many polls were made while it was the next one.
 */
function simulate(
  arrivals: number[],
  {
    headPollMs = 250,
    lateTimerMs = () => 0,
    answerMs = () => 1,
  }: { headPollMs?: number; lateTimerMs?: () => number; answerMs?: () => number } = {},
) {
  const cadence = new HeadCadence({ headPollMs });
  const seenAt: number[] = [];
  const pollsFor = new Array<number>(arrivals.length).fill(0);
  const headAt = (time: number) => arrivals.filter((arrival) => arrival <= time).length - 1;
  let noted = -1;
  let now = arrivals[0]! + 1;
  const end = arrivals[arrivals.length - 1]! + 60_000;
  while (noted < arrivals.length - 1 && now <= end) {
    const sentAt = now;
    const head = headAt(sentAt);
    if (head + 1 < arrivals.length) pollsFor[head + 1]! += 1;
    const answeredAt = sentAt + answerMs();
    cadence.notePoll(BigInt(head), sentAt, answeredAt);
    for (let block = noted + 1; block <= head; block += 1) {
      seenAt[block] = answeredAt;
      cadence.noteBlockTime(BigInt(block), new Date(Math.floor(arrivals[block]! / 1000) * 1000));
    }
    noted = Math.max(noted, head);
    now = answeredAt + cadence.nextPollDelay(answeredAt) + lateTimerMs();
  }
  const latency = arrivals.map((arrival, block) => seenAt[block]! - arrival);
  return { cadence, latency, pollsFor };
}

const steady = (count: number, intervalMs: number, start = 100_437) =>
  Array.from({ length: count }, (_, block) => start + block * intervalMs);
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

describe('adaptive head polling (chain/headCadence.ts)', () => {
  it('on a steady 1 s chain the head is asked for about twice a block once learned (four times before), and each block is seen within 50 ms', () => {
    const { latency, pollsFor, cadence } = simulate(steady(60, 1_000));
    expect(cadence.adaptive).toBe(true);
    const learned = 15;
    expect(sum(pollsFor.slice(learned)) / (60 - learned)).toBeLessThanOrEqual(2.1);
    expect(Math.max(...latency.slice(learned))).toBeLessThanOrEqual(51);
    // While learning, the fixed 250 ms poll: four a block, each block within 251 ms.
    expect(sum(pollsFor.slice(1, 5)) / 4).toBeGreaterThanOrEqual(4);
    expect(Math.max(...latency)).toBeLessThanOrEqual(251);
  });

  it('on a loaded machine (timers up to 60 ms late, answers in up to 40 ms, blocks 20 ms off their beat, stamps straddling a second) polls stay timed by the interval', () => {
    let seed = 7;
    const random = () => (seed = (seed * 16_807) % 2_147_483_647) / 2_147_483_647;
    const arrivals = steady(80, 1_000, 100_990).map((arrival) => arrival + Math.round(random() * 40 - 20));
    const { latency, pollsFor, cadence } = simulate(arrivals, {
      lateTimerMs: () => Math.round(random() * 60),
      answerMs: () => 1 + Math.round(random() * 40),
    });
    expect(cadence.adaptive).toBe(true);
    expect(sum(pollsFor.slice(20)) / 60).toBeLessThanOrEqual(3);
    expect(Math.max(...latency)).toBeLessThanOrEqual(350);
  });

  it('on a steady 12 s chain about two polls a block once learned instead of 48', () => {
    const { latency, pollsFor } = simulate(steady(30, 12_000));
    expect(sum(pollsFor.slice(10)) / 20).toBeLessThanOrEqual(2.5);
    expect(Math.max(...latency.slice(10))).toBeLessThanOrEqual(51);
  });

  it('blocks faster than learned: the first early block is seen at most the old interval late, then the fixed poll until the new interval is learned; every block is seen', () => {
    const slow = steady(20, 2_000);
    const fast = Array.from({ length: 30 }, (_, index) => slow[19]! + (index + 1) * 1_000);
    const { latency, cadence } = simulate([...slow, ...fast]);
    expect(latency.every((value) => Number.isFinite(value))).toBe(true);
    // The first block of the faster chain came while the monitor waited for the slow one's due time.
    expect(latency[20]).toBeLessThanOrEqual(1_001);
    // Then fixed polling (within 251 ms) until steady again, and adaptive at 1 s (within 51 ms).
    expect(Math.max(...latency.slice(21))).toBeLessThanOrEqual(251);
    expect(Math.max(...latency.slice(35))).toBeLessThanOrEqual(51);
    expect(cadence.intervalMs).toBe(1_000);
  });

  it('a chain that stops mining and restarts: polls go back to every 250 ms after the due block is late, and the first block after the restart is seen within one of them', () => {
    const before = steady(20, 1_000);
    const after = Array.from({ length: 20 }, (_, index) => before[19]! + 10_000 + index * 1_000);
    const { latency, pollsFor } = simulate([...before, ...after]);
    // The 10 s without a block: about 40 polls at 250 ms, not 200 at 50 ms.
    expect(pollsFor[20]).toBeLessThanOrEqual(45);
    expect(latency[20]).toBeLessThanOrEqual(251);
    expect(Math.max(...latency.slice(21))).toBeLessThanOrEqual(251);
    expect(Math.max(...latency.slice(30))).toBeLessThanOrEqual(51);
  });

  it('blocks mined by hand, several at once or at uneven times, never make polls adaptive', () => {
    const arrivals: number[] = [];
    let time = 100_000;
    for (let burst = 0; burst < 15; burst += 1) {
      time += 700 + ((burst * 389) % 1_300);
      for (let block = 0; block < 4; block += 1) arrivals.push(time);
    }
    const { latency, cadence } = simulate(arrivals);
    expect(cadence.adaptive).toBe(false);
    expect(Math.max(...latency)).toBeLessThanOrEqual(251);
  });
});
