import { spawn } from 'node:child_process';
import { killOnExit } from './killOnExit';

describe('children killed when the dev stack exits', () => {
  it('twenty children take one exit listener, not twenty (no MaxListenersExceededWarning)', async () => {
    const before = process.listenerCount('exit');
    const children = Array.from({ length: 20 }, () =>
      spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' }),
    );
    const forget = children.map((child) => killOnExit(child));
    expect(process.listenerCount('exit')).toBe(before + 1);
    forget.forEach((release) => release());
    expect(process.listenerCount('exit')).toBe(before);
    await Promise.all(
      children.map((child) => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        return exited;
      }),
    );
  });

  it('a process that exits without stopping its children kills them', async () => {
    const script = `
      const { spawn } = require('node:child_process');
      require('tsx/cjs');
      const { killOnExit } = require('./dev/services/killOnExit.ts');
      const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
      killOnExit(child);
      process.stdout.write(String(child.pid), () => process.exit(0));
    `;
    const parent = spawn(process.execPath, ['-e', script], { cwd: `${__dirname}/../..` });
    let pid = '';
    parent.stdout.on('data', (chunk: Buffer) => (pid += chunk.toString()));
    await new Promise((resolve) => parent.once('exit', resolve));
    expect(pid).toMatch(/^\d+$/);
    const deadline = Date.now() + 10_000;
    const alive = () => {
      try {
        process.kill(Number(pid), 0);
        return true;
      } catch {
        return false;
      }
    };
    while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive()).toBe(false);
  });
});
