/* global require, process, setInterval */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS preload for `node -r` */
// Preload (`node -r`, through NODE_OPTIONS so workflow threads run it too) for a memory figure that one
// RSS sample cannot give: with HEAP_AFTER_GC_DIR set, every V8 isolate of the process (the main thread and
// each workflow thread) reads <dir>/request every 500 ms; when it holds a new sample id, the isolate runs a
// full garbage collection and appends one JSON line (sample, pid, threadId, used heap in MiB after it) to
// <dir>/samples.jsonl. bench/lib/heapAfterGc.ts asks for samples and sums the isolates of each.
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');
const { threadId } = require('node:worker_threads');
const dir = process.env.HEAP_AFTER_GC_DIR;
if (dir) {
  v8.setFlagsFromString('--expose-gc');
  const collect = vm.runInNewContext('gc');
  let answered = '';
  setInterval(() => {
    let sample;
    try {
      sample = fs.readFileSync(path.join(dir, 'request'), 'utf8').trim();
    } catch {
      return;
    }
    if (!sample || sample === answered) return;
    answered = sample;
    collect();
    const usedMiB = Math.round((v8.getHeapStatistics().used_heap_size / 1048576) * 10) / 10;
    fs.appendFileSync(
      path.join(dir, 'samples.jsonl'),
      `${JSON.stringify({ sample, pid: process.pid, threadId, usedMiB })}\n`,
    );
  }, 500).unref();
}
