import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * The used heap of a process's V8 isolates after a forced full collection, over several samples (the
 * preload bench/lib/heapAfterGcPreload.cjs answers in each isolate): what the process keeps, without the
 * garbage an RSS sample counts by whenever the last collection ran. Start the process with `env()`.
 */
export async function heapAfterGcProbe() {
  const dir = await mkdtemp(join(tmpdir(), 'stablepay-heap-after-gc-'));
  let next = 0;
  return {
    env: (): Record<string, string> => ({
      HEAP_AFTER_GC_DIR: dir,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${join(__dirname, 'heapAfterGcPreload.cjs')}`,
    }),
    /**
     * `samples` samples `gapMs` apart, each the sum over the process's isolates; the median and every sample.
     * An isolate answers within its 500 ms poll plus its collection; each sample waits `answerMs` for them.
     */
    async measure(
      pid: number,
      { samples = 5, gapMs = 2_000, answerMs = 3_000 } = {},
    ): Promise<{ medianMiB: number; samplesMiB: number[]; isolates: number }> {
      const sums: number[] = [];
      let isolates = 0;
      for (let index = 0; index < samples; index++) {
        const sample = `${pid}-${next++}`;
        await writeFile(join(dir, 'request'), sample);
        await delay(answerMs);
        const lines = (await readFile(join(dir, 'samples.jsonl'), 'utf8').catch(() => ''))
          .split('\n')
          .filter(Boolean)
          .map(
            (line) => JSON.parse(line) as { sample: string; pid: number; threadId: number; usedMiB: number },
          )
          .filter((line) => line.sample === sample && line.pid === pid);
        if (lines.length === 0)
          throw new Error(`no isolate of process ${pid} answered heap sample ${sample}`);
        isolates = lines.length;
        sums.push(lines.reduce((sum, line) => sum + line.usedMiB, 0));
        await delay(gapMs);
      }
      const sorted = [...sums].sort((a, b) => a - b);
      return { medianMiB: sorted[Math.floor(sorted.length / 2)]!, samplesMiB: sums, isolates };
    },
  };
}
