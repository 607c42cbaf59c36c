import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { limitYoungGenerationOfNewThreads, missingMemorySettings } from './processMemory';

/**
 * A thread like a workflow thread under load: it allocates short-lived objects with some survivors and
 * reports the size of its new space after each of 40 rounds, in MiB.
 */
const CHURN = `
const v8 = require('node:v8');
const { parentPort } = require('node:worker_threads');
let kept = [];
const sizes = [];
for (let round = 0; round < 40; round++) {
  for (let i = 0; i < 50000; i++) {
    kept.push({ i, text: 'x' + i });
    if (kept.length > 20000) kept = [];
  }
  sizes.push(v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size / 1048576);
}
parentPort.postMessage(sizes);
`;

/**
 * The new space a new thread keeps through the churn: the median of its 40 sizes. Not the peak: pages a
 * loaded machine's GC threads have not yet given back count in the space for a moment (two CI runs saw a
 * bounded thread's peak at 25.5 MiB), while the size a thread keeps is what the bound is for.
 */
const keptNewSpaceOfNewThread = () =>
  new Promise<{ median: number; sizes: number[] }>((resolve, reject) => {
    const thread = new Worker(CHURN, { eval: true });
    thread.once('message', (sizes: number[]) => {
      const sorted = [...sizes].sort((a, b) => a - b);
      resolve({ median: sorted[Math.floor(sorted.length / 2)]!, sizes });
    });
    thread.once('error', reject);
  });

describe('the young generation of threads started after limitYoungGenerationOfNewThreads', () => {
  // 0 gives the flag back to V8's own sizing, for whatever else runs in this process.
  afterAll(() => setFlagsFromString('--max-semi-space-size=0'));

  it('stays within two semi-spaces of the set size, where V8 left alone grows it', async () => {
    setFlagsFromString('--max-semi-space-size=0');
    const unbounded = await keptNewSpaceOfNewThread();

    limitYoungGenerationOfNewThreads(1);
    // The smallest of three threads. A bound that did not apply leaves all three as large as `unbounded`.
    const threads = [
      await keptNewSpaceOfNewThread(),
      await keptNewSpaceOfNewThread(),
      await keptNewSpaceOfNewThread(),
    ];
    const bounded = Math.min(...threads.map((thread) => thread.median));

    // Left alone the churn grows the new space to 32 or 64 MiB (Node 24) and keeps it; bounded it keeps
    // 2 MiB (two 1 MiB semi-spaces), with moments up to 8 MiB in repeated runs on a loaded machine.
    const figures = `unbounded ${unbounded.sizes.join(' ')}; bounded ${threads.map((thread) => thread.sizes.join(' ')).join(' | ')}`;
    expect({ unbounded: unbounded.median >= 16, figures }).toEqual({ unbounded: true, figures });
    expect({ bounded: bounded < unbounded.median / 3, figures }).toEqual({ bounded: true, figures });
  });
});

describe('missingMemorySettings', () => {
  it('finds the semi-space bound among the launch flags or in NODE_OPTIONS, and the arena cap in the environment', () => {
    expect(
      missingMemorySettings(['--max-semi-space-size=16', '--import', 'tsx'], { MALLOC_ARENA_MAX: '2' }),
    ).toEqual([]);
    expect(
      missingMemorySettings([], {
        NODE_OPTIONS: '--require x.cjs --max-semi-space-size=8',
        MALLOC_ARENA_MAX: '4',
      }),
    ).toEqual([]);
    expect(missingMemorySettings(['--import', 'tsx'], { NODE_OPTIONS: '--max-old-space-size=4096' })).toEqual(
      ['--max-semi-space-size=16', 'MALLOC_ARENA_MAX=2'],
    );
  });
});
