import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { StackDescription } from './stackDescription';

/** Where `npm start` keeps its state (data, logs, the stack file): `.dev/`, or the folder STABLEPAY_DEV_DIR names. */
export function devStateDir(): string {
  return resolve(process.env.STABLEPAY_DEV_DIR ?? resolve(__dirname, '..', '.dev'));
}

/** `stack.json` in the state folder, or the file STABLEPAY_STACK_FILE names (the tests point the dev tools at their own). */
export function stackFilePath(): string {
  return process.env.STABLEPAY_STACK_FILE ?? join(devStateDir(), 'stack.json');
}

/** What `npm start` wrote, or undefined when the stack never started here. */
export function readStackFile(file = stackFilePath()): StackDescription | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as StackDescription;
}

/** The stack file, for a dev tool that cannot work without it. */
export function requireStackFile(file = stackFilePath()): StackDescription {
  const stack = readStackFile(file);
  if (!stack) throw new Error(`${file} does not exist: run \`npm start\` first`);
  return stack;
}
