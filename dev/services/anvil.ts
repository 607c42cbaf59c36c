import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Address, Hex } from 'viem';
import { watchAnvilForStalls } from './anvilStallWatch';
import { answerOrExit, startAllOrNone, startOnFreePort, superviseProcess } from './serviceProcess';

/**
 * Local EVM chains: one anvil process per chain id, spawned from the binary that `@foundry-rs/anvil`
 * installs for this platform (not through its node wrapper, so a signal reaches anvil itself).
 */

/**
 * anvil's default dev accounts (mnemonic "test test test test test test test test test test test junk",
 * derivation path m/44'/60'/0'/0/i), each funded with 10,000 ETH on every chain it starts. Account 0
 * deploys our contracts and is the dev stack's `devAccount`.
 */
export const ANVIL_DEV_ACCOUNTS = [
  {
    address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  },
  {
    address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  },
  {
    address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    privateKey: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  },
  {
    address: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
    privateKey: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  },
  {
    address: '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65',
    privateKey: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  },
  {
    address: '0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc',
    privateKey: '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  },
  {
    address: '0x976EA74026E726554dB657fA54763abd0C3a0aa9',
    privateKey: '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
  },
  {
    address: '0x14dC79964da2C08b23698B3D3cc7Ca32193d9955',
    privateKey: '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
  },
  {
    address: '0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f',
    privateKey: '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97',
  },
  {
    address: '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720',
    privateKey: '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6',
  },
] as const satisfies readonly { address: Address; privateKey: Hex }[];

export interface StartAnvilChainsParameters {
  /** `forkUrl`: the chain starts as a fork of that RPC's latest state (a private copy a test may move in time). */
  chains: { chainId: number; forkUrl?: string }[];
  /** Seconds between blocks (interval mining); without it every transaction is mined at once. */
  blockTime?: number;
  /** Block gas limit (anvil's default is 30M): mainnet-like background traffic needs more on a 2 s chain. */
  gasLimit?: number;
  /** Keeps each chain's state in `<stateDir>/<chainId>.json`: loaded at start, written at stop. */
  stateDir?: string;
  /** When false (the default), anvil's log lines go to this process's stdout, prefixed by chain id. */
  silent?: boolean;
  /** How long to wait for each chain to answer (default 30 s). */
  startTimeoutMs?: number;
}

export interface AnvilChain {
  chainId: number;
  rpcUrl: string;
  port: number;
}

export interface StartAnvilChainsReturnType {
  chains: AnvilChain[];
  /** Resolves once any chain's anvil exits (`anvil of chain 84532 exited (SIGKILL)`), stopped or not. */
  exited: Promise<string>;
  /** Stops every chain (SIGTERM, so state is written) and resolves once all have exited. */
  stop(): Promise<void>;
}

/** anvil exited or did not answer during start-up. */
export class AnvilStartError extends Error {
  override name = 'AnvilStartError';
  constructor(
    readonly chainId: number,
    reason: string,
    readonly stderr: string,
  ) {
    super(`anvil for chain ${chainId} did not start: ${reason}${stderr ? `\n${stderr.trim()}` : ''}`);
  }
}

const STOP_TIMEOUT_MS = 15_000;
const STDERR_KEPT_BYTES = 16 * 1024;

/** Starts one anvil per chain id, each on a free port of 127.0.0.1, and resolves once all answer. */
export async function startAnvilChains({
  chains,
  blockTime,
  gasLimit,
  stateDir,
  silent = false,
  startTimeoutMs = 30_000,
}: StartAnvilChainsParameters): Promise<StartAnvilChainsReturnType> {
  const chainIds = chains.map(({ chainId }) => chainId);
  if (new Set(chainIds).size !== chainIds.length)
    throw new Error(`duplicate chain ids in ${chainIds.join(', ')}`);
  if (stateDir !== undefined) mkdirSync(stateDir, { recursive: true });
  const binary = anvilBinary();

  const { running, stop } = await startAllOrNone(
    chains.map(({ chainId, forkUrl }) =>
      startAnvil({
        binary,
        chainId,
        forkUrl,
        blockTime,
        gasLimit,
        statePath: stateDir === undefined ? undefined : join(stateDir, `${chainId}.json`),
        silent,
        startTimeoutMs,
      }),
    ),
  );
  return {
    chains: running.map(({ chain }) => chain),
    exited: Promise.race(running.map(({ exited }) => exited)),
    stop,
  };
}

interface StartAnvilParameters {
  binary: string;
  chainId: number;
  forkUrl: string | undefined;
  blockTime: number | undefined;
  gasLimit: number | undefined;
  statePath: string | undefined;
  silent: boolean;
  startTimeoutMs: number;
}

interface AnvilInstance {
  chain: AnvilChain;
  exited: Promise<string>;
  stop(): Promise<void>;
}

/** Starts one anvil; a port taken between choosing it and anvil binding it is retried with another. */
function startAnvil(parameters: StartAnvilParameters): Promise<AnvilInstance> {
  return startOnFreePort((port) => startAnvilOnPort(parameters, port), {
    isPortTaken: (error) => error instanceof AnvilStartError && /address already in use/i.test(error.stderr),
  });
}

async function startAnvilOnPort(
  { binary, chainId, forkUrl, blockTime, gasLimit, statePath, silent, startTimeoutMs }: StartAnvilParameters,
  port: number,
): Promise<AnvilInstance> {
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId)];
  if (forkUrl !== undefined) args.push('--fork-url', forkUrl);
  if (blockTime !== undefined) args.push('--block-time', String(blockTime));
  if (gasLimit !== undefined) args.push('--gas-limit', String(gasLimit));
  if (statePath !== undefined) args.push('--state', statePath);
  if (silent) args.push('--quiet');

  const child = spawn(binary, args, { stdio: ['ignore', silent ? 'ignore' : 'pipe', 'pipe'] });
  const service = superviseProcess(child, { stopTimeoutMs: STOP_TIMEOUT_MS });
  const { stop } = service;
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEPT_BYTES);
  });
  if (!silent) prefixLines(child, `[anvil ${chainId}] `);

  const rpcUrl = `http://127.0.0.1:${port}`;
  const ready = await answerOrExit(service, (signal) => waitForChainId(rpcUrl, startTimeoutMs, signal));
  if ('exited' in ready) {
    await stop();
    throw new AnvilStartError(chainId, `exited (${ready.exited})`, stderr);
  }
  if (ready.answered !== chainId) {
    await stop();
    const reason =
      ready.answered === undefined
        ? `no answer within ${startTimeoutMs} ms`
        : `answered chain id ${ready.answered}`;
    throw new AnvilStartError(chainId, reason, stderr);
  }
  // Interval mining always brings the next block; automine can stall (see watchAnvilForStalls).
  const watch = blockTime === undefined ? watchAnvilForStalls(rpcUrl) : undefined;
  return {
    chain: { chainId, rpcUrl, port },
    exited: service.exited.then((how) => `anvil of chain ${chainId} exited (${how})`),
    stop: () => {
      watch?.stop();
      return stop();
    },
  };
}

/** Polls eth_chainId until it answers (returns the id), the time is up or `signal` aborts (returns undefined). */
async function waitForChainId(
  rpcUrl: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal.aborted) {
    try {
      const response = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        signal: AbortSignal.any([signal, AbortSignal.timeout(1_000)]),
      });
      const body = (await response.json()) as { result?: string };
      if (typeof body.result === 'string') return Number(BigInt(body.result));
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

function prefixLines(child: ChildProcess, prefix: string): void {
  let pending = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) process.stdout.write(`${prefix}${line}\n`);
  });
}

/** Path of the anvil binary for this platform, or `ANVIL_BIN` when set. */
export function anvilBinary(): string {
  const fromEnvironment = process.env.ANVIL_BIN;
  if (fromEnvironment) return fromEnvironment;
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  let packageJson: string;
  try {
    packageJson = require.resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(
      `${pkg} is not installed; run npm ci (it is an optional dependency of @foundry-rs/anvil)`,
    );
  }
  const binary = join(dirname(packageJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(binary)) throw new Error(`anvil binary missing at ${binary}`);
  return binary;
}
