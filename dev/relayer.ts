import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Address, type Hex, getAbiItem } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { type Logger, createLogger } from '../logging/logger';
import { LOCAL_RELAYER } from './chains/localSettlement';
import { LocalMessenger } from '../contracts/artifacts';
import { layerZeroRelayChainsOf, startLayerZeroRelayer } from './protocols/layerZeroRelayer';
import {
  type Poller,
  type RelayChainClients,
  pollEvery,
  relayChainClients,
  writeJsonAtomically,
} from './relaying';
import type { StackDescription } from './stackDescription';

/**
 * The local cross-chain relayer: the off-chain half of the LocalMessenger stand-in (contracts/local/).
 * It polls every chain's messenger for `PacketSent` and calls `deliver` on the destination chain's
 * messenger, which mints the USDe there and runs the compose step (staking into sUSDe for the merchant).
 *
 * Delivery is idempotent: a packet the destination already marks delivered is skipped, so restarts,
 * overlapping scans and a second relayer are harmless. A packet whose delivery fails stays pending and is
 * retried on every poll without holding up the others. With a state file, the scan position and the
 * pending packets survive restarts; without one the relayer starts at each chain's current block.
 */

export interface RelayerChain {
  chainId: number;
  rpcUrl: string;
  /** The chain's LocalMessenger. */
  messenger: Address;
}

export interface StartRelayerParameters {
  chains: RelayerChain[];
  /** The messengers' relayer account (LOCAL_RELAYER on local chains); pays for deliveries. */
  relayerPrivateKey: Hex;
  pollIntervalMs?: number;
  /** Keeps the scan position per chain and the undelivered packets here (JSON), across restarts. */
  stateFile?: string;
  logger?: Logger;
}

export type Relayer = Poller;

/** One `PacketSent`, as the relayer remembers it until the destination has it. */
export interface RelayedPacket {
  srcChainId: number;
  dstChainId: number;
  nonce: bigint;
  to: Address;
  amount: bigint;
  composeMsg: Hex;
}

/** Blocks per `eth_getLogs` request. */
const LOG_RANGE = 5_000n;
const RECEIPT_TIMEOUT_MS = 60_000;
const packetSentEvent = getAbiItem({ abi: LocalMessenger.abi, name: 'PacketSent' });

type ChainClients = RelayerChain & RelayChainClients;

interface RelayerState {
  /** Next block to scan, per source chain. */
  cursors: Map<number, bigint>;
  /** Undelivered packets by `src:nonce`. */
  pending: Map<string, RelayedPacket>;
}

/** Starts relaying between `chains` and returns a handle to stop it. */
export async function startRelayer({
  chains,
  relayerPrivateKey,
  pollIntervalMs = 500,
  stateFile,
  logger = createLogger({ level: 'info', name: 'relayer' }),
}: StartRelayerParameters): Promise<Relayer> {
  const chainIds = chains.map((chain) => chain.chainId);
  if (new Set(chainIds).size !== chainIds.length)
    throw new Error(`duplicate chain ids in ${chainIds.join(', ')}`);
  const account = privateKeyToAccount(relayerPrivateKey);
  const clients = new Map<number, ChainClients>(
    chains.map((chain) => [
      chain.chainId,
      { ...chain, ...relayChainClients(chain.chainId, chain.rpcUrl, account) },
    ]),
  );

  const state = stateFile ? readState(stateFile) : { cursors: new Map(), pending: new Map() };
  for (const chain of clients.values()) {
    if (!state.cursors.has(chain.chainId)) {
      state.cursors.set(chain.chainId, await chain.publicClient.getBlockNumber());
    }
  }
  const save = (): void => {
    if (stateFile) writeState(stateFile, state);
  };
  save();
  /** Packets already reported as undeliverable here (no such destination), so the log says it once. */
  const reportedUnroutable = new Set<string>();

  const scan = async (source: ChainClients): Promise<void> => {
    const latest = await source.publicClient.getBlockNumber();
    let cursor = state.cursors.get(source.chainId)!;
    if (cursor > latest + 1n) {
      // The chain is behind the saved position (it was reset): rescan it; delivered packets are skipped.
      logger.warn(
        { chainId: source.chainId, cursor: String(cursor), latest: String(latest) },
        'chain is behind the saved cursor; rescanning from block 0',
      );
      cursor = 0n;
    }
    while (cursor <= latest) {
      const toBlock = cursor + LOG_RANGE - 1n < latest ? cursor + LOG_RANGE - 1n : latest;
      const logs = await source.publicClient.getLogs({
        address: source.messenger,
        event: packetSentEvent,
        fromBlock: cursor,
        toBlock,
        strict: true,
      });
      for (const { args } of logs) {
        const packet: RelayedPacket = {
          srcChainId: Number(args.srcChainId),
          dstChainId: Number(args.dstChainId),
          nonce: args.nonce,
          to: args.to,
          amount: args.amount,
          composeMsg: args.composeMsg,
        };
        state.pending.set(packetKey(packet), packet);
      }
      cursor = toBlock + 1n;
      state.cursors.set(source.chainId, cursor);
      save();
    }
  };

  const deliver = async (packet: RelayedPacket): Promise<'delivered' | 'skipped' | 'unroutable'> => {
    const destination = clients.get(packet.dstChainId);
    if (!destination) return 'unroutable';
    const alreadyDelivered = await destination.publicClient.readContract({
      address: destination.messenger,
      abi: LocalMessenger.abi,
      functionName: 'delivered',
      args: [BigInt(packet.srcChainId), packet.nonce],
    });
    if (alreadyDelivered) return 'skipped';
    const hash = await destination.walletClient.writeContract({
      account,
      chain: destination.walletClient.chain,
      address: destination.messenger,
      abi: LocalMessenger.abi,
      functionName: 'deliver',
      args: [BigInt(packet.srcChainId), packet.nonce, packet.to, packet.amount, packet.composeMsg],
    });
    const receipt = await destination.publicClient.waitForTransactionReceipt({
      hash,
      timeout: RECEIPT_TIMEOUT_MS,
    });
    if (receipt.status !== 'success') throw new Error(`deliver transaction ${hash} reverted`);
    logger.info({ ...describe(packet), transactionHash: hash }, 'packet delivered');
    return 'delivered';
  };

  const poll = async (): Promise<void> => {
    try {
      await relayOnce();
    } catch (error) {
      logger.error({ err: error }, 'relaying failed; retrying on the next poll');
    }
  };

  const relayOnce = async (): Promise<void> => {
    for (const source of clients.values()) {
      try {
        await scan(source);
      } catch (error) {
        logger.error(
          { chainId: source.chainId, err: error },
          'scanning for packets failed; retrying on the next poll',
        );
      }
    }
    for (const [key, packet] of state.pending) {
      try {
        const outcome = await deliver(packet);
        if (outcome === 'unroutable') {
          if (!reportedUnroutable.has(key)) {
            reportedUnroutable.add(key);
            logger.error(describe(packet), 'packet for a chain this relayer does not serve; kept pending');
          }
          continue;
        }
        state.pending.delete(key);
        save();
      } catch (error) {
        logger.error(
          { ...describe(packet), err: error },
          'delivering a packet failed; retrying on the next poll',
        );
      }
    }
  };

  return pollEvery(poll, pollIntervalMs);
}

/** The stand-in relayer's chains from a stack description: every chain with a LocalMessenger (not LayerZero). */
export function relayerChainsOf(stack: Pick<StackDescription, 'chains'>): RelayerChain[] {
  return stack.chains.flatMap(({ chainId, rpcUrl, contracts }) =>
    contracts.messenger && !contracts.layerZeroEndpoint
      ? [{ chainId, rpcUrl, messenger: contracts.messenger }]
      : [],
  );
}

function packetKey({ srcChainId, nonce }: Pick<RelayedPacket, 'srcChainId' | 'nonce'>): string {
  return `${srcChainId}:${nonce}`;
}

function describe(packet: RelayedPacket): Record<string, string | number> {
  return {
    srcChainId: packet.srcChainId,
    dstChainId: packet.dstChainId,
    nonce: String(packet.nonce),
    to: packet.to,
    amount: String(packet.amount),
  };
}

interface StoredState {
  cursors: Record<string, string>;
  pending: (Omit<RelayedPacket, 'nonce' | 'amount'> & { nonce: string; amount: string })[];
}

function readState(file: string): RelayerState {
  if (!existsSync(file)) return { cursors: new Map(), pending: new Map() };
  const stored = JSON.parse(readFileSync(file, 'utf8')) as StoredState;
  const pending = stored.pending.map((packet) => ({
    ...packet,
    nonce: BigInt(packet.nonce),
    amount: BigInt(packet.amount),
  }));
  return {
    cursors: new Map(
      Object.entries(stored.cursors).map(([chainId, block]) => [Number(chainId), BigInt(block)]),
    ),
    pending: new Map(pending.map((packet) => [packetKey(packet), packet])),
  };
}

/** Writes the state atomically, so a crash never leaves half a file. */
function writeState(file: string, state: RelayerState): void {
  const stored: StoredState = {
    cursors: Object.fromEntries(
      [...state.cursors].map(([chainId, block]) => [String(chainId), String(block)]),
    ),
    pending: [...state.pending.values()].map((packet) => ({
      ...packet,
      nonce: String(packet.nonce),
      amount: String(packet.amount),
    })),
  };
  writeJsonAtomically(file, stored);
}

/**
 * `tsx dev/relayer.ts [stack file]`: relays between the dev stack's chains (default `.dev/stack.json`): the
 * stand-in messenger's packets, and LayerZero packets and composes on chains that carry the real protocols.
 */
if (require.main === module) {
  const devDir = resolve(__dirname, '..', '.dev');
  const stackFile = resolve(process.argv[2] ?? join(devDir, 'stack.json'));
  const stack = JSON.parse(readFileSync(stackFile, 'utf8')) as StackDescription;
  const logger = createLogger({ level: 'info', name: 'relayer' });
  const standIns = relayerChainsOf(stack);
  const layerZero = layerZeroRelayChainsOf(stack);
  Promise.all([
    standIns.length === 0
      ? undefined
      : startRelayer({
          chains: standIns,
          relayerPrivateKey: LOCAL_RELAYER.privateKey,
          stateFile: join(dirname(stackFile), 'relayer-state.json'),
          logger,
        }),
    layerZero.length === 0
      ? undefined
      : startLayerZeroRelayer({
          chains: layerZero,
          relayerPrivateKey: LOCAL_RELAYER.privateKey,
          stateFile: join(dirname(stackFile), 'layerzero-relayer-state.json'),
          logger,
        }),
  ]).then(
    (relayers) => {
      logger.info(
        {
          standIns: standIns.map((chain) => chain.chainId),
          layerZero: layerZero.map((chain) => chain.chainId),
        },
        'relayer started',
      );
      const shutdown = (): void => {
        void Promise.all(relayers.map((relayer) => relayer?.stop())).then(() => process.exit(0));
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    },
    (error: unknown) => {
      logger.error({ err: error }, 'relayer failed to start');
      process.exitCode = 1;
    },
  );
}
