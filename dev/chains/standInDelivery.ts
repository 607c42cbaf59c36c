import { heartbeat, sleep } from '@temporalio/activity';
import type { BridgeDeliveryAdapter, BridgePacket, Delivery } from '../../activities/bridgeDelivery';
import type { SettlementStepContext } from '../../activities/settlementSteps';
import { sessionIdToBytes16 } from '../../chain/depositAddress';
import { findRecentEvent } from '../../chain/recentEvents';
import { LocalMessenger, StakingComposer } from '../../contracts/artifacts';

/**
 * The local stack's bridge delivery: packets of chains without a LayerZero endpoint travel over the
 * stand-in LocalMessenger (delivered by dev/relayer.ts) and are staked by the StakingComposer in the
 * same call. Given to the worker by the dev entry (dev/worker.ts) and the test stacks, never by production.
 */
export function createStandInDelivery(context: SettlementStepContext): BridgeDeliveryAdapter {
  return {
    carries: (sourceChainId) => !context.operator.network(sourceChainId).contracts.layerZeroEndpoint,
    awaitDelivery: (packet) => awaitStandInDelivery(context, packet),
  };
}

/** Delivered once the settlement chain's messenger says so, staked in the same call. */
async function awaitStandInDelivery(
  { operator, settlementConfig }: SettlementStepContext,
  { sessionId, sourceChainId, nonce, settlementChainId }: BridgePacket,
): Promise<Delivery> {
  const client = operator.client(settlementChainId);
  const { messenger, settlementComposer } = await settlementConfig(settlementChainId);
  for (;;) {
    const delivered = await client.readContract({
      address: messenger,
      abi: LocalMessenger.abi,
      functionName: 'delivered',
      args: [BigInt(sourceChainId), nonce],
    });
    if (delivered) break;
    heartbeat();
    await sleep(500);
  }
  const composed = await findRecentEvent(client, {
    address: settlementComposer,
    abi: StakingComposer.abi,
    eventName: 'Composed',
    args: { sessionId: sessionIdToBytes16(sessionId) },
    match: (log) => log.args.srcChainId === BigInt(sourceChainId) && log.args.nonce === nonce,
  });
  if (!composed)
    throw new Error(
      `message ${sourceChainId}/${nonce} delivered but no Composed event found for session ${sessionId}`,
    );
  return {
    usdeAmount: composed.args.usdeAmount!,
    shares: composed.args.shares!,
    txHash: composed.transactionHash,
  };
}
