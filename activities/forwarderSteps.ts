import { ApplicationFailure } from '@temporalio/activity';
import { encodeFunctionData, erc20Abi, getAddress, type Address } from 'viem';
import { sessionIdToBytes16 } from '../chain/depositAddress';
import { CappedForwarderFactory, ForwarderFactory } from '../contracts/artifacts';
import { isDepositSettled } from '../db/deposits';
import { findHoldCapMicroUsd, findPayoutAddress } from '../db/sessions';
import { findUnfinishedFlush } from '../db/settlements';
import { sendWithNextNonce } from './lockedSends';
import { DEPOSIT_MISSING, heartbeating, type SettlementStepContext } from './settlementSteps';

export interface VerifyDepositBalanceInput {
  sessionId?: string;
  chainId: number;
  token: Address;
  depositAddress: Address;
  minimum: string;
  txHash?: string;
  logIndex?: number;
}

/**
 * Reorg safety: the deposit address still holds at least what the monitor saw, at the chain's head.
 * Funds a recorded flush already took (this transfer swept, or a flush in flight) count as there:
 * a retry after the flush must go on to finish it, not report the deposit missing.
 */
export function verifyDepositBalance(
  { db, operator }: SettlementStepContext,
  { sessionId, chainId, token, depositAddress, minimum, txHash, logIndex }: VerifyDepositBalanceInput,
): Promise<string> {
  return heartbeating(async () => {
    const balance = await operator
      .client(chainId)
      .readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [depositAddress] });
    if (balance >= BigInt(minimum)) return balance.toString();
    const alreadyFlushed =
      sessionId !== undefined &&
      ((await findUnfinishedFlush(db, { sessionId, chainId, tokenAddress: token })) !== undefined ||
        (txHash !== undefined &&
          logIndex !== undefined &&
          (await isDepositSettled(db, { chainId, txHash, logIndex }))));
    if (alreadyFlushed) return balance.toString();
    throw ApplicationFailure.nonRetryable(
      `deposit address ${depositAddress} holds ${balance} of ${token}, less than the ${minimum} detected (reorganised away?)`,
      DEPOSIT_MISSING,
    );
  });
}

/**
 * Deploys the session's forwarder on `chainId` (skipped when its code exists); returns its address. A session that
 * holds an overpayment gets its CappedForwarder, bound to its amount (chain/depositAddress.ts).
 */
export function deployForwarder(
  context: SettlementStepContext,
  { sessionId, chainId }: { sessionId: string; chainId: number },
): Promise<Address> {
  const { db, operator } = context;
  return heartbeating(async () => {
    const client = operator.client(chainId);
    const capMicroUsd = await findHoldCapMicroUsd(db, sessionId);
    if (capMicroUsd !== undefined) return deployCappedForwarder(context, { sessionId, chainId, capMicroUsd });
    const factory = context.factoryOf(chainId);
    const payout = await findPayoutAddress(db, { sessionId, chainId });
    if (!payout)
      throw ApplicationFailure.nonRetryable(
        `session ${sessionId} has no payment option on chain ${chainId}`,
        'SessionNotFound',
      );
    const merchant = getAddress(payout);
    const session = sessionIdToBytes16(sessionId);
    const forwarder = await client.readContract({
      address: factory,
      abi: ForwarderFactory.abi,
      functionName: 'predict',
      args: [session, merchant],
    });
    const code = await client.getCode({ address: forwarder });
    if (code && code !== '0x') return forwarder;
    const hash = await sendWithNextNonce(db, client, {
      to: factory,
      data: encodeFunctionData({
        abi: ForwarderFactory.abi,
        functionName: 'deploy',
        args: [session, merchant],
      }),
    });
    const receipt = await client.waitForTransactionReceipt({ hash, timeout: 120_000 });
    if (receipt.status !== 'success') throw new Error(`forwarder deployment ${hash} reverted`);
    return forwarder;
  });
}

async function deployCappedForwarder(
  { db, operator, cappedFactoryOf }: SettlementStepContext,
  { sessionId, chainId, capMicroUsd }: { sessionId: string; chainId: number; capMicroUsd: bigint },
): Promise<Address> {
  const client = operator.client(chainId);
  const factory = cappedFactoryOf(chainId);
  const payout = await findPayoutAddress(db, { sessionId, chainId });
  if (!payout)
    throw ApplicationFailure.nonRetryable(
      `session ${sessionId} has no payment option on chain ${chainId}`,
      'SessionNotFound',
    );
  const args = [sessionIdToBytes16(sessionId), getAddress(payout), capMicroUsd] as const;
  const forwarder = await client.readContract({
    address: factory,
    abi: CappedForwarderFactory.abi,
    functionName: 'predict',
    args,
  });
  const code = await client.getCode({ address: forwarder });
  if (code && code !== '0x') return forwarder;
  const hash = await sendWithNextNonce(db, client, {
    to: factory,
    data: encodeFunctionData({ abi: CappedForwarderFactory.abi, functionName: 'deploy', args }),
  });
  const receipt = await client.waitForTransactionReceipt({ hash, timeout: 120_000 });
  if (receipt.status !== 'success') throw new Error(`capped forwarder deployment ${hash} reverted`);
  return forwarder;
}
