import { ApplicationFailure } from '@temporalio/activity';
import { toMicroUsdRoundingDown } from '../money/microUsd';
import { listSettlements, recordBridgeDelivered } from '../db/settlements';
import { USDE_DECIMALS, type SettlementStepContext } from './settlementSteps';

/** A layer-2 flush's bridge message, as the session's settlement recorded it. */
export interface BridgePacket {
  sessionId: string;
  sourceChainId: number;
  nonce: bigint;
  settlementChainId: number;
}

/** What reached the settlement chain and was staked there for the merchant. */
export interface Delivery {
  usdeAmount: bigint;
  shares: bigint;
  /** The settlement-chain transaction that staked it (what `session.completed` reports). */
  txHash: string;
}

/**
 * One way a bridge message reaches the settlement chain and gets staked: LayerZero in production
 * (activities/layerZeroDelivery.ts); the local stack adds its stand-in messenger's (dev/chains/).
 */
export interface BridgeDeliveryAdapter {
  /** Whether packets sent from this chain travel this way. */
  carries(sourceChainId: number): boolean;
  /** Waits (heartbeating) until the packet is delivered and staked. */
  awaitDelivery(packet: BridgePacket): Promise<Delivery>;
}

export type BridgeDeliveryFactory = (context: SettlementStepContext) => BridgeDeliveryAdapter;

export interface AwaitBridgeDeliveryInput {
  sessionId: string;
  sourceChainId: number;
  nonce: string;
  settlementChainId: number;
}

/**
 * Waits until the bridge message of a layer-2 flush is delivered on the settlement chain and staked
 * for the merchant, through the adapter that carries packets of its source chain; records the delivery
 * and returns the sUSDe shares minted there.
 */
export async function awaitBridgeDelivery(
  { db }: SettlementStepContext,
  adapters: readonly BridgeDeliveryAdapter[],
  { sessionId, sourceChainId, nonce, settlementChainId }: AwaitBridgeDeliveryInput,
): Promise<string> {
  const adapter = adapters.find((candidate) => candidate.carries(sourceChainId));
  if (!adapter)
    throw ApplicationFailure.nonRetryable(
      `no bridge delivery is configured for packets from chain ${sourceChainId}`,
      'ChainNotConfigured',
    );
  const delivery = await adapter.awaitDelivery({
    sessionId,
    sourceChainId,
    nonce: BigInt(nonce),
    settlementChainId,
  });
  const row = (await listSettlements(db, sessionId)).find(
    (entry) => entry.chain_id === sourceChainId && entry.message_nonce === nonce,
  );
  if (row)
    await recordBridgeDelivered(db, row, {
      shares: delivery.shares,
      usdeAmount: delivery.usdeAmount,
      chainId: settlementChainId,
      txHash: delivery.txHash,
      deliveredMicroUsd: toMicroUsdRoundingDown(delivery.usdeAmount, USDE_DECIMALS),
    });
  return delivery.shares.toString();
}
