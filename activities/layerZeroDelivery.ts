import { heartbeat, sleep } from '@temporalio/activity';
import { encodeFunctionData, getAddress, keccak256, type Address, type Hex } from 'viem';
import { sessionIdToBytes16 } from '../chain/depositAddress';
import {
  COMPOSE_EMPTY,
  COMPOSE_RECEIVED,
  layerZeroEndpointAbi,
  oappAbi,
  oftComposeMessage,
  packetGuid,
  settlementComposeMsg,
} from '../chain/layerZero';
import type { OperatorClient } from '../chain/operatorChains';
import { findRecentEvent } from '../chain/recentEvents';
import { LayerZeroSettlementMessenger, LayerZeroStakingComposer } from '../contracts/artifacts';
import { findPayoutAddress } from '../db/sessions';
import { listSettlements } from '../db/settlements';
import type { BridgeDeliveryAdapter, BridgePacket, Delivery } from './bridgeDelivery';
import { sendWithNextNonce } from './lockedSends';
import { isRevert, revertReason, type SettlementStepContext } from './settlementSteps';

/**
 * LayerZero: the packet is identified by its GUID (nonce, source endpoint and OFT, destination endpoint and
 * OFT); the destination endpoint's compose queue says whether it has arrived (a queued message hash) and
 * been staked (RECEIVED). The composer's `Composed` event of that GUID carries the delivered USDe and shares.
 * A compose that stays queued (staking reverted, or no executor ran it) is run again by the operator once
 * it would succeed: the USDe waits at the composer meanwhile, and the session stays `bridging`.
 */
export function createLayerZeroDelivery(
  context: SettlementStepContext,
  { composeRetryAfterMs }: { composeRetryAfterMs: number },
): BridgeDeliveryAdapter {
  return {
    carries: (sourceChainId) => Boolean(context.operator.network(sourceChainId).contracts.layerZeroEndpoint),
    awaitDelivery: (packet) => awaitLayerZeroDelivery(context, composeRetryAfterMs, packet),
  };
}

async function awaitLayerZeroDelivery(
  context: SettlementStepContext,
  composeRetryAfterMs: number,
  packet: BridgePacket,
): Promise<Delivery> {
  const { operator, settlementConfig } = context;
  const { sourceChainId, settlementChainId, nonce } = packet;
  const source = operator.client(sourceChainId);
  const destination = operator.client(settlementChainId);
  const { messenger, settlementComposer } = await settlementConfig(sourceChainId);
  const [oft, route] = await Promise.all([
    source.readContract({ address: messenger, abi: LayerZeroSettlementMessenger.abi, functionName: 'oft' }),
    source.readContract({
      address: messenger,
      abi: LayerZeroSettlementMessenger.abi,
      functionName: 'routeOf',
      args: [BigInt(settlementChainId)],
    }),
  ]);
  const peer = await source.readContract({
    address: oft,
    abi: oappAbi,
    functionName: 'peers',
    args: [route.eid],
  });
  const destinationOft = getAddress(`0x${peer.slice(-40)}`);
  const srcEid = operator.network(sourceChainId).layerZeroEid;
  const guid = packetGuid({ nonce, srcEid, sender: oft, dstEid: route.eid, receiver: peer });
  const endpoint = await destination.readContract({
    address: destinationOft,
    abi: oappAbi,
    functionName: 'endpoint',
  });
  const queueArgs = [destinationOft, settlementComposer, guid, 0] as const;

  let pendingSince: number | undefined;
  for (;;) {
    const queued = await destination.readContract({
      address: endpoint,
      abi: layerZeroEndpointAbi,
      functionName: 'composeQueue',
      args: queueArgs,
    });
    if (queued === COMPOSE_RECEIVED) break;
    if (queued === COMPOSE_EMPTY) {
      heartbeat({ guid, state: 'in_flight' });
      await sleep(500);
      continue;
    }
    pendingSince ??= Date.now();
    if (Date.now() - pendingSince < composeRetryAfterMs) {
      heartbeat({ guid, state: 'compose_queued' });
      await sleep(500);
      continue;
    }
    const reason = await retryCompose(context, destination, {
      ...packet,
      srcEid,
      messenger,
      queued,
      endpoint,
      queueArgs,
    });
    heartbeat({ guid, state: reason ? 'compose_failed' : 'compose_retried', reason });
    if (reason) await sleep(Math.min(composeRetryAfterMs, 30_000));
  }
  const composed = await findRecentEvent(destination, {
    address: settlementComposer,
    abi: LayerZeroStakingComposer.abi,
    eventName: 'Composed',
    args: { guid },
  });
  if (!composed) throw new Error(`packet ${guid} was composed but its Composed event was not found`);
  return {
    usdeAmount: composed.args.usdeAmount!,
    shares: composed.args.shares!,
    txHash: composed.transactionHash,
  };
}

/**
 * Runs a queued compose from the operator's key (`endpoint.lzCompose` is open to anyone): rebuilds the
 * message the OFT queued from what the flush recorded, checks it against the queued hash, simulates, and
 * sends only a compose that would succeed. Returns why it did not run, if it did not.
 */
async function retryCompose(
  context: SettlementStepContext,
  client: OperatorClient,
  compose: BridgePacket & {
    srcEid: number;
    messenger: Address;
    queued: Hex;
    endpoint: Address;
    queueArgs: readonly [from: Address, to: Address, guid: Hex, index: number];
  },
): Promise<string | undefined> {
  const { db } = context;
  const { sessionId, sourceChainId, nonce, srcEid, messenger, queued, endpoint, queueArgs } = compose;
  const guid = queueArgs[2];
  const row = (await listSettlements(db, sessionId)).find(
    (entry) => entry.chain_id === sourceChainId && entry.message_nonce === nonce.toString(),
  );
  const payout = await findPayoutAddress(db, { sessionId, chainId: sourceChainId });
  if (!row?.usde_amount || !payout) return `no recorded flush for packet ${guid}`;
  const message = oftComposeMessage({
    nonce,
    srcEid,
    amountLD: BigInt(row.usde_amount),
    composeFrom: messenger,
    composeMsg: settlementComposeMsg({
      merchant: getAddress(payout),
      sessionId: sessionIdToBytes16(sessionId),
    }),
  });
  if (keccak256(message) !== queued)
    return `the queued compose of ${guid} is not the message this flush sent`;
  const call = {
    address: endpoint,
    abi: layerZeroEndpointAbi,
    functionName: 'lzCompose',
    args: [...queueArgs, message, '0x'],
    account: client.account,
  } as const;
  try {
    await client.simulateContract(call);
  } catch (error) {
    if (isRevert(error)) return revertReason(error);
    throw error;
  }
  const hash = await sendWithNextNonce(db, client, {
    to: endpoint,
    data: encodeFunctionData({ abi: layerZeroEndpointAbi, functionName: 'lzCompose', args: call.args }),
  });
  const receipt = await client.waitForTransactionReceipt({ hash, timeout: 120_000 });
  return receipt.status === 'success' ? undefined : `lzCompose ${hash} reverted`;
}
