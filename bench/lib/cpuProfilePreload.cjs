/* global require, process */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS preload for `node -r` */
// Preload (`node -r`) for bench targets named in PROFILE_TARGETS (comma-separated script names): the
// node:inspector CPU profiler, 1 ms sampling, starts on SIGUSR2 (the measured window) and the profile is
// written to PROFILE_DIR on SIGTERM (`--cpu-prof` cannot be set per target through NODE_OPTIONS).
const { Session } = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');
const script = process.argv.find((a) => a.includes('bench/targets/'));
const wanted = (process.env.PROFILE_TARGETS || '').split(',').filter(Boolean);
if (script && wanted.some((w) => script.endsWith(w))) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  let started = false;
  process.on('SIGUSR2', () => {
    if (started) return;
    started = true;
    session.post('Profiler.start');
  });
  process.prependListener('SIGTERM', () => {
    if (!started) return;
    session.post('Profiler.stop', (err, { profile }) => {
      if (!err)
        fs.writeFileSync(
          path.join(process.env.PROFILE_DIR || '/tmp', `${path.basename(script)}.${process.pid}.cpuprofile`),
          JSON.stringify(profile),
        );
    });
  });
}
