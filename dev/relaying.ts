import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  type Account,
  type PublicClient,
  type WalletClient,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
} from 'viem';

/**
 * What the local relayers (dev/relayer.ts for the stand-in messenger, dev/protocols/layerZeroRelayer.ts for
 * LayerZero) share: clients per chain, a poll loop that never overlaps itself, and an atomic state file.
 */

export interface RelayChainClients {
  chainId: number;
  publicClient: PublicClient;
  walletClient: WalletClient;
}

/** A public and a wallet client for a local chain, the wallet acting as `account`. */
export function relayChainClients(chainId: number, rpcUrl: string, account: Account): RelayChainClients {
  const chain = defineChain({
    id: chainId,
    name: `Local chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl);
  return {
    chainId,
    publicClient: createPublicClient({ chain, transport, pollingInterval: 100 }),
    walletClient: createWalletClient({ chain, transport, account }),
  };
}

export interface Poller {
  /** Stops polling; resolves once the poll in progress (if any) has finished. */
  stop(): Promise<void>;
}

/** Runs `poll` now and then `intervalMs` after each run ends, until stopped. */
export function pollEvery(poll: () => Promise<void>, intervalMs: number): Poller {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const run = (): void => {
    running = poll().finally(() => {
      if (!stopped) timer = setTimeout(run, intervalMs);
    });
  };
  run();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/** Writes JSON atomically (temporary file, then rename), so a crash never leaves half a file. */
export function writeJsonAtomically(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(temporary, file);
}
