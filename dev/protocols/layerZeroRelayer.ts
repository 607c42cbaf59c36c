import { existsSync, readFileSync } from 'node:fs';
import { type Address, type Hex, BaseError, getAddress, hexToBigInt, hexToNumber, size, slice } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { type Logger, createLogger } from '../../logging/logger';
import { COMPOSE_EMPTY, COMPOSE_RECEIVED, layerZeroEndpointAbi } from '../../chain/layerZero';
import {
  type Poller,
  type RelayChainClients,
  pollEvery,
  relayChainClients,
  writeJsonAtomically,
} from '../relaying';
import type { StackDescription } from '../stackDescription';
import { simpleMessageLibAbi } from './layerZero';

/**
 * The local LayerZero network: what DVNs and executors do for real endpoints, done by one key against the real
 * EndpointV2 contracts of the local chains. It reads `PacketSent` on every endpoint, verifies the packet on the
 * destination (`SimpleMessageLib.validatePacket`, whose only allowed caller is this relayer), executes it
 * (`endpoint.lzReceive`) and then every compose the receiving OApp queued (`ComposeSent` → `endpoint.lzCompose`).
 *
 * Like LayerZero's executor, a compose that reverts is reported once (`lzComposeAlert`) and not retried: the
 * message stays queued at the endpoint, and whoever fixes the cause calls `lzCompose` again (the settlement
 * worker does). A packet whose verification or receive fails stays pending and is retried every poll. Every
 * step is checked against the endpoint first, so restarts, rescans and a second relayer are harmless.
 */

export interface LayerZeroRelayChain {
  chainId: number;
  rpcUrl: string;
  endpoint: Address;
  /** The endpoint's SimpleMessageLib (verifies packets arriving here). */
  messageLib: Address;
}

export interface StartLayerZeroRelayerParameters {
  chains: LayerZeroRelayChain[];
  /** The message libraries' whitelisted caller (LOCAL_RELAYER); pays for verification and execution. */
  relayerPrivateKey: Hex;
  pollIntervalMs?: number;
  stateFile?: string;
  logger?: Logger;
}

/** A packet as PacketV1Codec lays it out: version (1) ‖ nonce (8) ‖ srcEid (4) ‖ sender (32) ‖ dstEid (4) ‖ receiver (32) ‖ guid (32) ‖ message. */
export interface DecodedPacket {
  nonce: bigint;
  srcEid: number;
  sender: Hex;
  dstEid: number;
  receiver: Address;
  guid: Hex;
  message: Hex;
}

export function decodePacket(encoded: Hex): DecodedPacket {
  return {
    nonce: hexToBigInt(slice(encoded, 1, 9)),
    srcEid: hexToNumber(slice(encoded, 9, 13)),
    sender: slice(encoded, 13, 45),
    dstEid: hexToNumber(slice(encoded, 45, 49)),
    receiver: getAddress(slice(encoded, 61, 81)),
    guid: slice(encoded, 81, 113),
    message: size(encoded) > 113 ? slice(encoded, 113) : '0x',
  };
}

interface PendingCompose {
  chainId: number;
  from: Address;
  to: Address;
  guid: Hex;
  index: number;
  message: Hex;
}

interface RelayerState {
  cursors: Map<number, bigint>;
  /** Undelivered packets (encoded as emitted), by `srcEid:sender:nonce`. */
  packets: Map<string, Hex>;
  composes: Map<string, PendingCompose>;
}

const LOG_RANGE = 5_000n;
const RECEIPT_TIMEOUT_MS = 60_000;

type Chain = LayerZeroRelayChain & RelayChainClients & { eid: number };

export async function startLayerZeroRelayer({
  chains,
  relayerPrivateKey,
  pollIntervalMs = 500,
  stateFile,
  logger = createLogger({ level: 'info', name: 'layerzero-relayer' }),
}: StartLayerZeroRelayerParameters): Promise<Poller> {
  const account = privateKeyToAccount(relayerPrivateKey);
  const byEid = new Map<number, Chain>();
  const byChainId = new Map<number, Chain>();
  for (const chain of chains) {
    const clients = relayChainClients(chain.chainId, chain.rpcUrl, account);
    const eid = await clients.publicClient.readContract({
      address: chain.endpoint,
      abi: layerZeroEndpointAbi,
      functionName: 'eid',
    });
    const entry = { ...chain, ...clients, eid };
    byEid.set(eid, entry);
    byChainId.set(chain.chainId, entry);
  }

  const state = stateFile
    ? readState(stateFile)
    : { cursors: new Map(), packets: new Map(), composes: new Map() };
  for (const chain of byChainId.values())
    if (!state.cursors.has(chain.chainId))
      state.cursors.set(chain.chainId, await chain.publicClient.getBlockNumber());
  const save = (): void => {
    if (stateFile) writeState(stateFile, state);
  };
  save();
  const reported = new Set<string>();

  const scan = async (chain: Chain): Promise<void> => {
    const latest = await chain.publicClient.getBlockNumber();
    let cursor = state.cursors.get(chain.chainId)!;
    if (cursor > latest + 1n) cursor = 0n; // the chain was reset: rescan; finished work is skipped
    while (cursor <= latest) {
      const toBlock = cursor + LOG_RANGE - 1n < latest ? cursor + LOG_RANGE - 1n : latest;
      const logs = await chain.publicClient.getContractEvents({
        address: chain.endpoint,
        abi: layerZeroEndpointAbi,
        fromBlock: cursor,
        toBlock,
        strict: true,
      });
      for (const log of logs) {
        if (log.eventName === 'PacketSent') {
          const packet = decodePacket(log.args.encodedPayload);
          state.packets.set(`${packet.srcEid}:${packet.sender}:${packet.nonce}`, log.args.encodedPayload);
        } else if (log.eventName === 'ComposeSent') {
          const { from, to, guid, index, message } = log.args;
          state.composes.set(`${chain.chainId}:${guid}:${index}`, {
            chainId: chain.chainId,
            from,
            to,
            guid,
            index,
            message,
          });
        }
      }
      cursor = toBlock + 1n;
      state.cursors.set(chain.chainId, cursor);
      save();
    }
  };

  const send = async (chain: Chain, call: Record<string, unknown>, what: string): Promise<Hex> => {
    const hash = await chain.walletClient.writeContract({
      account,
      chain: chain.walletClient.chain,
      ...call,
    } as never);
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS });
    if (receipt.status !== 'success') throw new Error(`${what} transaction ${hash} reverted`);
    return hash;
  };

  const deliverPacket = async (encoded: Hex): Promise<'delivered' | 'done' | 'unroutable'> => {
    const packet = decodePacket(encoded);
    const destination = byEid.get(packet.dstEid);
    if (!destination) return 'unroutable';
    const read = (functionName: 'inboundPayloadHash' | 'lazyInboundNonce', args: readonly unknown[]) =>
      destination.publicClient.readContract({
        address: destination.endpoint,
        abi: layerZeroEndpointAbi,
        functionName,
        args,
      } as never) as Promise<Hex | bigint>;
    const [payloadHash, lazyNonce] = await Promise.all([
      read('inboundPayloadHash', [packet.receiver, packet.srcEid, packet.sender, packet.nonce]),
      read('lazyInboundNonce', [packet.receiver, packet.srcEid, packet.sender]),
    ]);
    if (payloadHash === COMPOSE_EMPTY && packet.nonce <= (lazyNonce as bigint)) return 'done';
    if (payloadHash === COMPOSE_EMPTY)
      await send(
        destination,
        {
          address: destination.messageLib,
          abi: simpleMessageLibAbi,
          functionName: 'validatePacket',
          args: [encoded],
        },
        'validatePacket',
      );
    const hash = await send(
      destination,
      {
        address: destination.endpoint,
        abi: layerZeroEndpointAbi,
        functionName: 'lzReceive',
        args: [
          { srcEid: packet.srcEid, sender: packet.sender, nonce: packet.nonce },
          packet.receiver,
          packet.guid,
          packet.message,
          '0x',
        ],
      },
      'lzReceive',
    );
    logger.info(
      {
        guid: packet.guid,
        srcEid: packet.srcEid,
        dstEid: packet.dstEid,
        nonce: String(packet.nonce),
        transactionHash: hash,
      },
      'packet delivered',
    );
    return 'delivered';
  };

  /** Runs a queued compose; a revert is alerted on-chain once and left to be retried by hand (or by the worker). */
  const deliverCompose = async (compose: PendingCompose): Promise<void> => {
    const chain = byChainId.get(compose.chainId)!;
    const queued = await chain.publicClient.readContract({
      address: chain.endpoint,
      abi: layerZeroEndpointAbi,
      functionName: 'composeQueue',
      args: [compose.from, compose.to, compose.guid, compose.index],
    });
    if (queued === COMPOSE_RECEIVED || queued === COMPOSE_EMPTY) return;
    const args = [compose.from, compose.to, compose.guid, compose.index, compose.message, '0x'] as const;
    try {
      await chain.publicClient.simulateContract({
        account,
        address: chain.endpoint,
        abi: layerZeroEndpointAbi,
        functionName: 'lzCompose',
        args,
      });
    } catch (error) {
      const reason = revertData(error);
      const short = error instanceof BaseError ? error.shortMessage : String(error);
      logger.warn(
        { guid: compose.guid, to: compose.to, reason: short },
        'compose reverted; alerted and left queued for a retry',
      );
      await send(
        chain,
        {
          address: chain.endpoint,
          abi: layerZeroEndpointAbi,
          functionName: 'lzComposeAlert',
          args: [
            compose.from,
            compose.to,
            compose.guid,
            compose.index,
            0n,
            0n,
            compose.message,
            '0x',
            reason,
          ],
        },
        'lzComposeAlert',
      );
      return;
    }
    const hash = await send(
      chain,
      { address: chain.endpoint, abi: layerZeroEndpointAbi, functionName: 'lzCompose', args },
      'lzCompose',
    );
    logger.info({ guid: compose.guid, to: compose.to, transactionHash: hash }, 'compose delivered');
  };

  const relayOnce = async (): Promise<void> => {
    for (const chain of byChainId.values()) {
      try {
        await scan(chain);
      } catch (error) {
        logger.error(
          { chainId: chain.chainId, err: error },
          'scanning the endpoint failed; retrying on the next poll',
        );
      }
    }
    for (const [key, encoded] of state.packets) {
      try {
        const outcome = await deliverPacket(encoded);
        if (outcome === 'unroutable') {
          if (!reported.has(key)) {
            reported.add(key);
            logger.error({ packet: key }, 'packet for an endpoint this relayer does not serve; kept pending');
          }
          continue;
        }
        state.packets.delete(key);
        save();
      } catch (error) {
        logger.error({ packet: key, err: error }, 'delivering a packet failed; retrying on the next poll');
      }
    }
    for (const [key, compose] of state.composes) {
      try {
        await deliverCompose(compose);
        state.composes.delete(key);
        save();
      } catch (error) {
        logger.error({ compose: key, err: error }, 'running a compose failed; retrying on the next poll');
      }
    }
  };

  return pollEvery(async () => {
    try {
      await relayOnce();
    } catch (error) {
      logger.error({ err: error }, 'relaying failed; retrying on the next poll');
    }
  }, pollIntervalMs);
}

/** The raw revert data of a failed simulation, for `lzComposeAlert`'s reason. */
function revertData(error: unknown): Hex {
  if (error instanceof BaseError) {
    const withData = error.walk((cause) => typeof (cause as { data?: unknown }).data === 'string');
    const data = (withData as { data?: unknown } | null)?.data;
    if (typeof data === 'string' && data.startsWith('0x')) return data as Hex;
    const raw = error.walk((cause) => typeof (cause as { raw?: unknown }).raw === 'string') as {
      raw?: Hex;
    } | null;
    if (raw?.raw) return raw.raw;
  }
  return '0x';
}

/** The LayerZero relayer's chains from a stack description: every chain whose contracts include an endpoint. */
export function layerZeroRelayChainsOf(stack: Pick<StackDescription, 'chains'>): LayerZeroRelayChain[] {
  return stack.chains.flatMap(({ chainId, rpcUrl, contracts }) =>
    contracts.layerZeroEndpoint && contracts.layerZeroMessageLib
      ? [
          {
            chainId,
            rpcUrl,
            endpoint: contracts.layerZeroEndpoint,
            messageLib: contracts.layerZeroMessageLib,
          },
        ]
      : [],
  );
}

interface StoredState {
  cursors: Record<string, string>;
  packets: string[];
  composes: PendingCompose[];
}

function readState(file: string): RelayerState {
  if (!existsSync(file)) return { cursors: new Map(), packets: new Map(), composes: new Map() };
  const stored = JSON.parse(readFileSync(file, 'utf8')) as StoredState;
  return {
    cursors: new Map(
      Object.entries(stored.cursors).map(([chainId, block]) => [Number(chainId), BigInt(block)]),
    ),
    packets: new Map(
      stored.packets.map((encoded) => {
        const packet = decodePacket(encoded as Hex);
        return [`${packet.srcEid}:${packet.sender}:${packet.nonce}`, encoded as Hex];
      }),
    ),
    composes: new Map(
      stored.composes.map((compose) => [`${compose.chainId}:${compose.guid}:${compose.index}`, compose]),
    ),
  };
}

function writeState(file: string, state: RelayerState): void {
  const stored: StoredState = {
    cursors: Object.fromEntries(
      [...state.cursors].map(([chainId, block]) => [String(chainId), String(block)]),
    ),
    packets: [...state.packets.values()],
    composes: [...state.composes.values()],
  };
  writeJsonAtomically(file, stored);
}
