import type { ChildProcess } from 'node:child_process';
import { findFreePort } from './freePort';
import { killOnExit } from './killOnExit';

/**
 * What the local chain and bundler launchers share: supervising a spawned service process, waiting for
 * it to answer or exit, retrying a port taken by someone else, and starting several at once so that
 * nothing is left running when one fails.
 */

export interface SupervisedProcess {
  /** Resolves with the exit code, the signal, or the spawn error's message. */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after `stopTimeoutMs`; resolves once the process has exited. */
  stop(): Promise<void>;
}

export function superviseProcess(
  child: ChildProcess,
  { stopTimeoutMs }: { stopTimeoutMs: number },
): SupervisedProcess {
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ?? code ?? 'unknown'));
    child.once('error', (error) => resolve(error.message));
  });
  // Never leave the service behind when this process exits without calling stop().
  const forget = killOnExit(child);
  return {
    exited,
    async stop() {
      forget();
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls with `answer` until it settles or the process exits first; the poll is aborted either way. */
export async function answerOrExit<T>(
  service: SupervisedProcess,
  answer: (signal: AbortSignal) => Promise<T>,
): Promise<{ answered: T } | { exited: number | string }> {
  const polling = new AbortController();
  try {
    return await Promise.race([
      answer(polling.signal).then((answered) => ({ answered })),
      service.exited.then((status) => ({ exited: status })),
    ]);
  } finally {
    polling.abort();
  }
}

/** Starts on a free port, again on another when the port was taken before the service bound it. */
export async function startOnFreePort<T>(
  start: (port: number) => Promise<T>,
  { isPortTaken, attempts = 3 }: { isPortTaken: (error: unknown) => boolean; attempts?: number },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await findFreePort());
    } catch (error) {
      if (!isPortTaken(error) || attempt >= attempts) throw error;
    }
  }
}

/** Starts every service in parallel; when one fails, stops those that started and throws its error. */
export async function startAllOrNone<T extends { stop(): Promise<void> }>(
  starting: Promise<T>[],
): Promise<{
  running: T[];
  stop(): Promise<void>;
}> {
  const started = await Promise.allSettled(starting);
  const running = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const stop = async (): Promise<void> => {
    await Promise.all(running.map((instance) => instance.stop()));
  };
  const failure = started.find((result) => result.status === 'rejected');
  if (failure) {
    await stop();
    throw failure.reason;
  }
  return { running, stop };
}
