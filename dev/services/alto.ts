import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Address, type Hex, numberToHex, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { answerOrExit, startAllOrNone, startOnFreePort, superviseProcess } from './serviceProcess';

/**
 * ERC-4337 bundlers for the local chains: one Alto (`@pimlico/alto`, a real bundler) per chain,
 * run by this Node binary from the installed package. On anvil it runs with `--safe-mode false`
 * (no debug_traceCall tracer); at start it deploys its simulation contracts from its utility key,
 * so fresh executor and utility keys are generated per chain and funded with `anvil_setBalance`
 * (fresh keys never race a test or the dev account for nonces).
 *
 * Start-up is CPU-bound: Alto's CLI loads a large ES module graph (Sentry, OpenTelemetry, viem)
 * before it does anything, about 1.3 s of CPU per process. The installed CLI is therefore bundled
 * once into a single file (with the esbuild that tsx ships), which loads in about 0.35 s; the bundle
 * is cached per Alto and esbuild version under node_modules/.cache and runs the same code.
 */

export interface AltoChain {
  chainId: number;
  /** anvil RPC URL (the methods anvil_setBalance must be available). */
  rpcUrl: string;
  /** EntryPoint addresses to serve, e.g. v0.7 and v0.8. */
  entryPoints: Address[];
}

export interface StartAltoBundlersParameters {
  chains: AltoChain[];
  /** When false (the default), Alto's log lines go to this process's stdout, prefixed by chain id. */
  silent?: boolean;
  /** How long to wait for each bundler to answer (default 30 s). */
  startTimeoutMs?: number;
}

export interface AltoBundler {
  chainId: number;
  /** The bundler's JSON-RPC endpoint. */
  url: string;
}

export interface StartAltoBundlersReturnType {
  bundlers: AltoBundler[];
  /** Resolves once any bundler exits (`the Alto bundler of chain 84532 exited (SIGKILL)`), stopped or not. */
  exited: Promise<string>;
  /** Stops every bundler and resolves once all have exited. */
  stop(): Promise<void>;
}

/** Alto exited or did not answer during start-up. */
export class AltoStartError extends Error {
  override name = 'AltoStartError';
  constructor(
    readonly chainId: number,
    reason: string,
    readonly output: string,
  ) {
    super(`Alto for chain ${chainId} did not start: ${reason}${output ? `\n${output.trim()}` : ''}`);
  }
}

/** Ether given to each executor and to the utility key (it refills executors from its own balance). */
const KEY_BALANCE = parseEther('1000');
const STOP_TIMEOUT_MS = 10_000;
const OUTPUT_KEPT_BYTES = 16 * 1024;

/** Starts one Alto per chain, in parallel, and resolves once every one answers JSON-RPC. */
export async function startAltoBundlers({
  chains,
  silent = false,
  startTimeoutMs = 30_000,
}: StartAltoBundlersParameters): Promise<StartAltoBundlersReturnType> {
  const cli = await altoEntryScript();
  const { running, stop } = await startAllOrNone(
    chains.map((chain) => startAlto({ cli, chain, silent, startTimeoutMs })),
  );
  return {
    bundlers: running.map(({ bundler }) => bundler),
    exited: Promise.race(running.map(({ exited }) => exited)),
    stop,
  };
}

interface StartAltoParameters {
  cli: string;
  chain: AltoChain;
  silent: boolean;
  startTimeoutMs: number;
}

interface AltoInstance {
  bundler: AltoBundler;
  exited: Promise<string>;
  stop(): Promise<void>;
}

async function startAlto(parameters: StartAltoParameters): Promise<AltoInstance> {
  const executorKey = generatePrivateKey();
  const utilityKey = generatePrivateKey();
  await Promise.all(
    [executorKey, utilityKey].map((key) =>
      setBalance(parameters.chain.rpcUrl, privateKeyToAccount(key).address),
    ),
  );
  return startOnFreePort((port) => startAltoOnPort(parameters, { executorKey, utilityKey }, port), {
    isPortTaken: (error) => error instanceof AltoStartError && /EADDRINUSE/.test(error.output),
  });
}

async function startAltoOnPort(
  { cli, chain, silent, startTimeoutMs }: StartAltoParameters,
  { executorKey, utilityKey }: { executorKey: Hex; utilityKey: Hex },
  port: number,
): Promise<AltoInstance> {
  const args = [
    cli,
    '--entrypoints',
    chain.entryPoints.join(','),
    '--rpc-url',
    chain.rpcUrl,
    '--port',
    String(port),
    '--executor-private-keys',
    executorKey,
    '--utility-private-key',
    utilityKey,
    '--safe-mode',
    'false',
    // anvil mines on demand: poll for receipts and bundle often, so an operation lands in well under a second.
    '--block-time',
    '250',
    '--min-bundle-interval',
    '50',
    '--max-bundle-interval',
    '250',
    '--log-level',
    silent ? 'warn' : 'info',
    // JSON lines: the human-readable format runs pino-pretty in a worker thread, which costs start-up time.
    '--json',
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const service = superviseProcess(child, { stopTimeoutMs: STOP_TIMEOUT_MS });
  const { stop } = service;
  let output = '';
  const keep = (chunk: string): void => {
    output = (output + chunk).slice(-OUTPUT_KEPT_BYTES);
  };
  child.stderr.setEncoding('utf8').on('data', keep);
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    keep(chunk);
    if (!silent)
      for (const line of chunk.split('\n').filter(Boolean))
        process.stdout.write(`[alto ${chain.chainId}] ${line}\n`);
  });

  const url = `http://127.0.0.1:${port}/rpc`;
  const ready = await answerOrExit(service, (signal) => waitForEntryPoints(url, startTimeoutMs, signal));
  if ('exited' in ready) {
    await stop();
    throw new AltoStartError(chain.chainId, `exited (${ready.exited})`, output);
  }
  if (!ready.answered) {
    await stop();
    throw new AltoStartError(chain.chainId, `no answer within ${startTimeoutMs} ms`, output);
  }
  return {
    bundler: { chainId: chain.chainId, url },
    exited: service.exited.then((how) => `the Alto bundler of chain ${chain.chainId} exited (${how})`),
    stop,
  };
}

/** Polls eth_supportedEntryPoints until it answers with a list (true), or the time is up or aborted (false). */
async function waitForEntryPoints(url: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal.aborted) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_supportedEntryPoints', params: [] }),
        signal: AbortSignal.any([signal, AbortSignal.timeout(1_000)]),
      });
      const body = (await response.json()) as { result?: unknown };
      if (Array.isArray(body.result)) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

async function setBalance(rpcUrl: string, address: Address): Promise<void> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'anvil_setBalance',
      params: [address, numberToHex(KEY_BALANCE)],
    }),
  });
  const body = (await response.json()) as { error?: { message: string } };
  if (body.error) throw new Error(`anvil_setBalance on ${rpcUrl} failed: ${body.error.message}`);
}

/** The script that runs Alto: `ALTO_CLI` when set, else the cached bundle of the installed CLI. */
async function altoEntryScript(): Promise<string> {
  const fromEnvironment = process.env.ALTO_CLI;
  if (fromEnvironment) return fromEnvironment;
  // The package exports only its library entry (esm/index.js); the CLI sits beside it.
  const cli = join(dirname(require.resolve('@pimlico/alto')), 'cli', 'alto.js');
  const esbuild = (await import(
    require.resolve('esbuild', { paths: [dirname(require.resolve('tsx/package.json'))] })
  )) as typeof import('esbuild');
  const altoVersion = (
    JSON.parse(readFileSync(join(cli, '..', '..', '..', 'package.json'), 'utf8')) as { version: string }
  ).version;
  const cacheDir = resolve(__dirname, '..', '..', 'node_modules', '.cache', 'stablepay');
  const bundle = join(cacheDir, `alto-${altoVersion}-esbuild-${esbuild.version}.mjs`);
  if (existsSync(bundle)) return bundle;

  mkdirSync(cacheDir, { recursive: true });
  const temporary = `${bundle}.${process.pid}.tmp`;
  await esbuild.build({
    entryPoints: [cli],
    outfile: temporary,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    logLevel: 'error',
    // CommonJS dependencies call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as __altoCreateRequire } from 'node:module'; const require = __altoCreateRequire(import.meta.url);",
    },
  });
  // Atomic, so parallel test runs never start a half-written bundle.
  renameSync(temporary, bundle);
  return bundle;
}
