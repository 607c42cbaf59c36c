import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findFreePort } from './freePort';
import { answerOrExit, startOnFreePort, superviseProcess } from './serviceProcess';

/**
 * MailDev (npm `maildev`): a real SMTP server that keeps every message it receives and shows them in
 * a web UI with a REST API (`GET <webUrl>/api/email`). The dev stack and the tests send login codes
 * to it through SMTP_URL and read them back through the REST API. Each start keeps its mail in a fresh
 * temporary folder that `stop()` deletes, so no message outlives the run.
 */

export interface MailDevServer {
  /** What the API's SMTP_URL is set to. */
  smtpUrl: string;
  /** The web UI; the REST API lives under `<webUrl>/api`. */
  webUrl: string;
  /** Resolves once the server exits, stopped or not, with its exit code or signal. */
  exited: Promise<number | string>;
  /** Stops the server and deletes its mail. */
  stop(): Promise<void>;
}

/** MailDev exited or did not answer during start-up. */
export class MailDevStartError extends Error {
  override name = 'MailDevStartError';
  constructor(
    reason: string,
    readonly output: string,
  ) {
    super(`MailDev did not start: ${reason}${output ? `\n${output.trim()}` : ''}`);
  }
}

const STOP_TIMEOUT_MS = 5_000;
const OUTPUT_KEPT_BYTES = 16 * 1024;

/** The CLI script of the installed `maildev` (ESM-only: its package exports no require entry). */
const MAILDEV_CLI = resolve(__dirname, '..', '..', 'node_modules', 'maildev', 'dist', 'bin', 'maildev.js');

/** Starts MailDev on two free ports of 127.0.0.1 and resolves once its REST API answers. */
export async function startMailDev({ startTimeoutMs = 30_000 } = {}): Promise<MailDevServer> {
  const mailDirectory = await mkdtemp(join(tmpdir(), 'stablepay-maildev-'));
  try {
    return await startOnFreePort(
      async (smtpPort) =>
        startOnPorts({ smtpPort, webPort: await findFreePort(), mailDirectory, startTimeoutMs }),
      { isPortTaken },
    );
  } catch (error) {
    await rm(mailDirectory, { recursive: true, force: true });
    throw error;
  }
}

const isPortTaken = (error: unknown) => error instanceof MailDevStartError && /EADDRINUSE/.test(error.output);

async function startOnPorts({
  smtpPort,
  webPort,
  mailDirectory,
  startTimeoutMs,
}: {
  smtpPort: number;
  webPort: number;
  mailDirectory: string;
  startTimeoutMs: number;
}): Promise<MailDevServer> {
  const args = [
    MAILDEV_CLI,
    '--smtp',
    String(smtpPort),
    '--web',
    String(webPort),
    '--ip',
    '127.0.0.1',
    '--web-ip',
    '127.0.0.1',
    '--mail-directory',
    mailDirectory,
  ];
  // Its own folder as working directory, so no maildev config file of a parent folder is picked up.
  const child = spawn(process.execPath, args, { cwd: mailDirectory, stdio: ['ignore', 'pipe', 'pipe'] });
  const service = superviseProcess(child, { stopTimeoutMs: STOP_TIMEOUT_MS });
  let output = '';
  const keep = (chunk: string) => {
    output = (output + chunk).slice(-OUTPUT_KEPT_BYTES);
  };
  child.stdout?.setEncoding('utf8').on('data', keep);
  child.stderr?.setEncoding('utf8').on('data', keep);

  const webUrl = `http://127.0.0.1:${webPort}`;
  const stop = async () => {
    await service.stop();
    await rm(mailDirectory, { recursive: true, force: true });
  };
  const ready = await answerOrExit(service, (signal) => waitForApi(webUrl, startTimeoutMs, signal));
  if ('exited' in ready || !ready.answered) {
    await service.stop();
    throw new MailDevStartError(
      'exited' in ready ? `exited (${ready.exited})` : `no answer within ${startTimeoutMs} ms`,
      output,
    );
  }
  return { smtpUrl: `smtp://127.0.0.1:${smtpPort}`, webUrl, exited: service.exited, stop };
}

async function waitForApi(webUrl: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal.aborted) {
    try {
      const response = await fetch(`${webUrl}/api/healthz`, {
        signal: AbortSignal.any([signal, AbortSignal.timeout(1_000)]),
      });
      if (response.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  return false;
}
