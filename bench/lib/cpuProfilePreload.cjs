/* global require, process */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS preload for `node -r` */
// Preload (`node -r`) for bench targets named in PROFILE_TARGETS (comma-separated script names; the worker's
// dev/worker.ts too): the node:inspector CPU profiler of the main thread, 1 ms sampling. PROFILE_SIGNAL
// (default SIGUSR2; the Temporal worker shuts down on SIGUSR2, so its benches pick another) starts a
// profile (the measured window); a second one stops it and writes it to PROFILE_DIR as <script>.<pid>.<n>.cpuprofile, so one process can give
// one profile per measured window (the scale bench's feed at each N). A profile still running at SIGTERM is
// written as <script>.<pid>.cpuprofile (`--cpu-prof` cannot be set per target through NODE_OPTIONS).
const { Session } = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');
const script = process.argv.find((a) => a.includes('bench/targets/') || a.endsWith('dev/worker.ts'));
const signal = process.env.PROFILE_SIGNAL || 'SIGUSR2';
const wanted = (process.env.PROFILE_TARGETS || '').split(',').filter(Boolean);
if (script && wanted.some((w) => script.endsWith(w))) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  let running = false;
  let written = 0;
  const write = (name, profile) =>
    fs.writeFileSync(path.join(process.env.PROFILE_DIR || '/tmp', name), JSON.stringify(profile));
  process.on(signal, () => {
    if (!running) {
      running = true;
      session.post('Profiler.start');
      return;
    }
    running = false;
    session.post('Profiler.stop', (err, { profile }) => {
      if (!err) write(`${path.basename(script)}.${process.pid}.${++written}.cpuprofile`, profile);
    });
  });
  process.prependListener('SIGTERM', () => {
    if (!running) return;
    session.post('Profiler.stop', (err, { profile }) => {
      if (!err) write(`${path.basename(script)}.${process.pid}.cpuprofile`, profile);
    });
  });
}
