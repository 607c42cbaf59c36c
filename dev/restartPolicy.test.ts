import { decideAfterCrash, DEV_RESTART_POLICY, ordinal, recentCrashes } from './restartPolicy';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

describe('the dev supervisor’s restart policy', () => {
  it('restarts a first crash after 1 s and says which process, why and how often', () => {
    expect(decideAfterCrash({ name: 'api-1', cause: { signal: 'SIGKILL' }, crashTimes: [], now: 0 })).toEqual(
      {
        action: 'restart',
        delayMs: 1_000,
        line: 'api-1 restarted after SIGKILL, 1st time in 10 min',
      },
    );
  });

  it('doubles the back-off with each crash in ten minutes, up to 30 s', () => {
    const delays: number[] = [];
    const lines: string[] = [];
    const crashTimes: number[] = [];
    // One crash every 40 s: never five in two minutes, so never a crash loop.
    for (let crash = 0; crash < 8; crash++) {
      const now = crash * 40 * SECOND;
      const decision = decideAfterCrash({ name: 'worker-2', cause: { code: 1 }, crashTimes, now });
      if (decision.action !== 'restart') throw new Error(`crash ${crash + 1}: ${decision.reason}`);
      delays.push(decision.delayMs);
      lines.push(decision.line);
      crashTimes.push(now);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    expect(lines[1]).toBe('worker-2 restarted after exit code 1, 2nd time in 10 min');
    expect(lines[7]).toBe('worker-2 restarted after exit code 1, 8th time in 10 min');
  });

  it('starts the back-off afresh once the earlier crashes are more than ten minutes old', () => {
    const decision = decideAfterCrash({
      name: 'signer',
      cause: { signal: 'SIGSEGV' },
      crashTimes: [0, 1 * MINUTE, 2 * MINUTE],
      now: 13 * MINUTE,
    });
    expect(decision).toEqual({
      action: 'restart',
      delayMs: 1_000,
      line: 'signer restarted after SIGSEGV, 1st time in 10 min',
    });
  });

  it('stops the stack at the fifth crash of one process in two minutes, naming the crash loop', () => {
    const crashTimes = [0, 10 * SECOND, 30 * SECOND, 70 * SECOND];
    const fifth = decideAfterCrash({ name: 'relayer', cause: { code: 1 }, crashTimes, now: 119 * SECOND });
    expect(fifth).toEqual({
      action: 'stop',
      reason:
        'relayer crashed 5 times in 2 min (last: exit code 1): a crash loop, which restarting would only repeat',
    });
    // The same five crashes over more than two minutes are restarted (the first has left the window).
    expect(
      decideAfterCrash({ name: 'relayer', cause: { code: 1 }, crashTimes, now: 121 * SECOND }),
    ).toMatchObject({
      action: 'restart',
      delayMs: 16_000,
      line: 'relayer restarted after exit code 1, 5th time in 10 min',
    });
  });

  it('keeps only the crash times that can still count', () => {
    expect(recentCrashes([0, 5 * MINUTE, 9 * MINUTE], 12 * MINUTE)).toEqual([5 * MINUTE, 9 * MINUTE]);
    expect(DEV_RESTART_POLICY.countWindowMs).toBeGreaterThanOrEqual(DEV_RESTART_POLICY.crashLoopWindowMs);
  });

  it('writes ordinals as people read them', () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map(ordinal)).toEqual([
      '1st',
      '2nd',
      '3rd',
      '4th',
      '11th',
      '12th',
      '13th',
      '21st',
      '22nd',
      '23rd',
      '101st',
      '111th',
    ]);
  });
});
