import type { OperatorChains } from '../chain/operatorChains';
import type { Db } from '../db/client';
import {
  awaitBridgeDelivery,
  type AwaitBridgeDeliveryInput,
  type BridgeDeliveryFactory,
} from './bridgeDelivery';
import { flushForwarder, type FlushForwarderInput } from './flushForwarder';
import { deployForwarder, verifyDepositBalance, type VerifyDepositBalanceInput } from './forwarderSteps';
import { createLayerZeroDelivery } from './layerZeroDelivery';
import { settlementStepContext } from './settlementSteps';

export interface SettlementActivityDependencies {
  db: Db;
  operator: OperatorChains;
  /** Slippage allowed against stablecoin parity when quoting `minUsdeOut`, in basis points. */
  slippageBps: number;
  /**
   * How long a LayerZero compose may sit queued (delivered, not staked) before the worker runs it itself with
   * the operator key; the network's executor normally runs it within seconds. Default 60 s.
   */
  composeRetryAfterMs?: number;
  /** Bridge deliveries beside LayerZero's (the local stack's stand-in messenger); none in production. */
  bridgeDeliveries?: readonly BridgeDeliveryFactory[];
}

/**
 * The on-chain phase of a session, run by the operator key, one step per activity: verify the deposit,
 * deploy the forwarder (activities/forwarderSteps.ts), flush it, which swaps and stakes or bridges
 * (activities/flushForwarder.ts, activities/swapQuote.ts), and await the bridge delivery and its stake
 * (activities/bridgeDelivery.ts). Every step is idempotent by construction: the forwarder deploy skips
 * existing code, and a flush sweeps the forwarder's whole balance, with the signed transaction recorded
 * before it is broadcast — a repeated step after a crash finds the recorded transaction (and re-sends it
 * if needed) or an empty forwarder, and never moves funds twice.
 */
export function createSettlementActivities({
  db,
  operator,
  slippageBps,
  composeRetryAfterMs = 60_000,
  bridgeDeliveries = [],
}: SettlementActivityDependencies) {
  const context = settlementStepContext({ db, operator });
  const deliveries = [
    createLayerZeroDelivery(context, { composeRetryAfterMs }),
    ...bridgeDeliveries.map((create) => create(context)),
  ];
  return {
    verifyDepositBalance: (input: VerifyDepositBalanceInput) => verifyDepositBalance(context, input),
    deployForwarder: (input: { sessionId: string; chainId: number }) => deployForwarder(context, input),
    flushForwarder: (input: FlushForwarderInput) => flushForwarder(context, slippageBps, input),
    awaitBridgeDelivery: (input: AwaitBridgeDeliveryInput) => awaitBridgeDelivery(context, deliveries, input),
  };
}

export type SettlementActivities = ReturnType<typeof createSettlementActivities>;
