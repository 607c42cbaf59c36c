import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { BaseError, ContractFunctionRevertedError, type Address } from 'viem';
import type { OperatorChains } from '../chain/operatorChains';
import { redactProviderUrls } from '../logging/providerUrlRedaction';
import { ForwarderFactory } from '../contracts/artifacts';
import type { Db } from '../db/client';

/** Failure types the session workflow branches on. */
export const SETTLEMENT_REVERTED = 'SettlementReverted';
export const DEPOSIT_MISSING = 'DepositMissing';

export const USDE_DECIMALS = 18;

/** What every settlement step reads: the database, the operator's chains, and each chain's settlement config. */
export interface SettlementStepContext {
  db: Db;
  operator: OperatorChains;
  /** The chain's forwarder factory; a chain without one is a non-retryable ChainNotConfigured. */
  factoryOf(chainId: number): Address;
  /** The chain's capped forwarder factory (sessions that hold an overpayment); ChainNotConfigured without one. */
  cappedFactoryOf(chainId: number): Address;
  /** The factory's settlement configuration on the chain (messenger, composer, settlement chain id, ...). */
  settlementConfig(chainId: number): Promise<SettlementConfig>;
}

export type SettlementConfig = Awaited<ReturnType<typeof readSettlementConfig>>;

function readSettlementConfig(operator: OperatorChains, factory: Address, chainId: number) {
  return operator
    .client(chainId)
    .readContract({ address: factory, abi: ForwarderFactory.abi, functionName: 'settlement' });
}

export function settlementStepContext({
  db,
  operator,
}: {
  db: Db;
  operator: OperatorChains;
}): SettlementStepContext {
  const factoryOf = (chainId: number): Address => {
    const factory = operator.network(chainId).forwarderFactory;
    if (!factory)
      throw ApplicationFailure.nonRetryable(
        `chain ${chainId} has no forwarder factory`,
        'ChainNotConfigured',
      );
    return factory;
  };
  const cappedFactoryOf = (chainId: number): Address => {
    const factory = operator.network(chainId).cappedForwarderFactory;
    if (!factory)
      throw ApplicationFailure.nonRetryable(
        `chain ${chainId} has no capped forwarder factory`,
        'ChainNotConfigured',
      );
    return factory;
  };
  return {
    db,
    operator,
    factoryOf,
    cappedFactoryOf,
    settlementConfig: async (chainId) => readSettlementConfig(operator, factoryOf(chainId), chainId),
  };
}

/**
 * The revert as a readable reason: the custom error with its arguments, or viem's short message. It
 * becomes the session's failureReason, so no provider URL survives in it.
 */
export function revertReason(error: unknown): string {
  return redactProviderUrls(unredactedRevertReason(error));
}

function unredactedRevertReason(error: unknown): string {
  if (error instanceof BaseError) {
    const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
      const args = (reverted.data.args ?? []).map((arg) => String(arg)).join(', ');
      return `${reverted.data.errorName}(${args})`;
    }
    return error.shortMessage;
  }
  return error instanceof Error ? error.message : String(error);
}

export function isRevert(error: unknown): boolean {
  return (
    error instanceof BaseError &&
    error.walk((cause) => cause instanceof ContractFunctionRevertedError) !== null
  );
}

/** How often a chain step tells Temporal its worker is alive (the workflow's heartbeat timeout is 20 s). */
const HEARTBEAT_EVERY_MS = 5_000;

/**
 * Runs a chain step while heartbeating: a worker that dies mid-step (crash, SIGKILL, lost host) is
 * noticed at the heartbeat timeout, so another worker retries the idempotent step within seconds
 * instead of after the 5-minute start-to-close timeout.
 */
export async function heartbeating<T>(step: () => Promise<T>): Promise<T> {
  heartbeat();
  const timer = setInterval(() => heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await step();
  } finally {
    clearInterval(timer);
  }
}
