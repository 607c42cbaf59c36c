/* global require, process, setInterval */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS preload for `node -r` */
// Preload (`node -r`, through NODE_OPTIONS so worker threads run it too) for the memory soak: every
// HEAP_STATS_EVERY_MS each V8 isolate of the process (the main thread and every workflow thread) appends
// one JSON line with its heap spaces, in MiB, to HEAP_STATS_FILE. A heap snapshot covers only the main
// thread and leaves hundreds of MiB in the process's malloc arenas; this costs one small write per isolate.
const v8 = require('node:v8');
const fs = require('node:fs');
const { threadId } = require('node:worker_threads');
const file = process.env.HEAP_STATS_FILE;
if (file) {
  const mib = (bytes) => Math.round((bytes / 1048576) * 10) / 10;
  setInterval(
    () => {
      const heap = v8.getHeapStatistics();
      const spaces = {};
      for (const space of v8.getHeapSpaceStatistics()) spaces[space.space_name] = mib(space.space_size);
      fs.appendFileSync(
        file,
        `${JSON.stringify({ at: Date.now(), pid: process.pid, threadId, totalMiB: mib(heap.total_heap_size), usedMiB: mib(heap.used_heap_size), externalMiB: mib(heap.external_memory), mallocedMiB: mib(heap.malloced_memory), arrayBuffersMiB: threadId === 0 ? mib(process.memoryUsage().arrayBuffers) : undefined, spaces })}\n`,
      );
    },
    Number(process.env.HEAP_STATS_EVERY_MS || 10000),
  ).unref();
}
