import { type Address, type Hex, erc20Abi } from 'viem';
import type { DelegationFrameworkContracts } from '../chain/delegationFramework';
import type { Caveat, Delegation } from '../chain/delegations';
import type { OperatorClient } from '../chain/operatorChains';
import { encodePeriodicChargeRedemption, readPeriodAllowance } from '../chain/periodicTransfers';

/**
 * One period's charge on chain (issue 42): moves exactly the period amount from the customer's account
 * into the period session's deposit address by redeeming the subscription's delegation, sent by the
 * subscription executor (the delegate). The caller has opened the period's charge row first; this asks
 * the chain before it sends, so a retry after a crash between the redemption and its record finds the
 * transfer already made (the deposit address is the period's own) and never sends a second one. Nothing
 * is sent when the permission is revoked, the period already used, or the balance below the amount: no
 * partial charge. The caller has waited for a block in the enforcer's period first (awaitPeriodOnChain.ts):
 * read from an earlier block, the allowance is the previous period's.
 */

export interface PeriodChargeRequest {
  delegation: Delegation;
  /** The delegation's ERC20PeriodTransferEnforcer caveat. */
  periodCaveat: Caveat;
  token: Address;
  customer: Address;
  depositAddress: Address;
  amount: bigint;
  /** A block at or before the charge row was opened: the earliest a redemption of this period can be. */
  fromBlock: bigint;
  /**
   * False when the caller's own attempt just wrote the period's charge row: no attempt before it opened the
   * period, so none can have sent its redemption, and the search for one is skipped (a log query per
   * charge, the costliest read when a thousand charges fall due at once).
   */
  mayHaveEarlierRedemption?: boolean;
}

export type PeriodChargeOutcome =
  { kind: 'redeemed'; txHash: Hex; alreadyDone: boolean } | { kind: 'failed'; failureReason: string };

/** Sends the redemption; the worker numbers it under the executor key's lock (activities/lockedSends.ts). */
export type RedemptionSender = (call: { to: Address; data: Hex }) => Promise<Hex>;

export async function chargePeriod(
  executor: OperatorClient,
  framework: Pick<DelegationFrameworkContracts, 'delegationManager' | 'erc20PeriodTransferEnforcer'>,
  request: PeriodChargeRequest,
  send: RedemptionSender = (call) => executor.sendTransaction(call),
): Promise<PeriodChargeOutcome> {
  const earlier =
    request.mayHaveEarlierRedemption === false ? undefined : await findRedemption(executor, request);
  if (earlier) return { kind: 'redeemed', txHash: earlier, alreadyDone: true };

  const allowance = await readPeriodAllowance(executor, {
    framework,
    delegation: request.delegation,
    caveat: request.periodCaveat,
  });
  if (allowance.revoked) return { kind: 'failed', failureReason: 'permission_revoked' };
  if (allowance.available < request.amount) return { kind: 'failed', failureReason: 'period_allowance_used' };
  const balance = await executor.readContract({
    address: request.token,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [request.customer],
  });
  if (balance < request.amount) return { kind: 'failed', failureReason: 'insufficient_balance' };

  const txHash = await send({
    to: framework.delegationManager,
    data: encodePeriodicChargeRedemption({
      delegation: request.delegation,
      token: request.token,
      payee: request.depositAddress,
      amount: request.amount,
    }),
  });
  const receipt = await executor.waitForTransactionReceipt({ hash: txHash });
  if (receipt.status !== 'success') return { kind: 'failed', failureReason: 'redemption_reverted' };
  return { kind: 'redeemed', txHash, alreadyDone: false };
}

/** The transfer from the customer into this period's deposit address, if one was already made. */
async function findRedemption(
  executor: OperatorClient,
  request: PeriodChargeRequest,
): Promise<Hex | undefined> {
  const logs = await executor.getContractEvents({
    address: request.token,
    abi: erc20Abi,
    eventName: 'Transfer',
    args: { from: request.customer, to: request.depositAddress },
    fromBlock: request.fromBlock,
  });
  return logs.find((log) => log.args.value === request.amount)?.transactionHash ?? undefined;
}
