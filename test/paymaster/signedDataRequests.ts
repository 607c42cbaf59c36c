import { randomBytes } from 'node:crypto';
import { type Address, type Hex, encodeFunctionData, parseAbi } from 'viem';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import type { Db } from '../../db/client';
import { recordReceiptAndCharge } from '../../db/gasCharges';
import type { TestApp } from '../harness/app';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';
import { MAINNET_CHAIN_ID } from './mainnetStandIn';
import { allowContract, createPaymasterClient } from './paymasterApi';

/**
 * The paymaster RPC requests the limit and money-safety tests send: one allowlisted call with fixed gas,
 * so every request's price is known in advance, and the clocks and dollar strings they check it with.
 *
 * At the local feed's 3,000 USD/ETH: (0x30000 + 0x30000 + 0x10000 + 50,000 paymaster verification floor
 * + 0 postOp) gas × 2 gwei = 1,017,504,000,000,000 wei = 3.052512 USD (what the budgets count); with the
 * default 10 % markup 3.3577632 → 3.357764 USD (rounded up to the micro-dollar: what the merchant's caps,
 * the sender's caps and the prepaid reservation count).
 */
export const OP_COST_USD_MICRO = 3_052_512n;
export const OP_CHARGED_USD_MICRO = 3_357_764n;

/** The allowlisted call target of every request. */
export const TARGET: Address = '0x1000000000000000000000000000000000000001';

export const targetCallData: Hex = encodeFunctionData({
  abi: parseAbi(['function execute(address dest, uint256 value, bytes func)']),
  functionName: 'execute',
  args: [TARGET, 0n, '0x'],
});

/** A fresh sender, as an attacker inventing senders would use. */
export const freshSender = (): Address => `0x${randomBytes(20).toString('hex')}` as Address;

export interface SignedDataRequestOptions {
  method?: string;
  id?: number | string;
  sender?: Address;
  nonce?: number | bigint;
  chainId?: number;
  entryPoint?: Address;
  /** Replaces or adds user operation fields (0x quantities). */
  fields?: Record<string, string>;
  /** params[3], e.g. `{ token }` for user-paid gas. */
  context?: Record<string, unknown>;
}

/** A JSON-RPC request for signed data (pm_getPaymasterData unless told) over the fixed-gas operation. */
export function signedDataRequest({
  method = 'pm_getPaymasterData',
  id = 1,
  sender = freshSender(),
  nonce = 0,
  chainId = 84532,
  entryPoint = ENTRY_POINT_V07_ADDRESS,
  fields = {},
  context,
}: SignedDataRequestOptions = {}) {
  return {
    jsonrpc: '2.0',
    id,
    method,
    params: [
      {
        sender,
        nonce: `0x${nonce.toString(16)}`,
        callData: targetCallData,
        callGasLimit: '0x30000',
        verificationGasLimit: '0x30000',
        preVerificationGas: '0x10000',
        maxFeePerGas: '0x77359400',
        maxPriorityFeePerGas: '0x3b9aca00',
        signature: '0x',
        ...fields,
      },
      entryPoint,
      chainId,
      ...(context ? [context] : []),
    ],
  };
}

/** Micro-dollars as the 6-decimal USD string the API takes ("3.052512"). */
export const usd = (micro: bigint): string =>
  `${micro / 1_000_000n}.${(micro % 1_000_000n).toString().padStart(6, '0')}`;

/** A clock the test moves by hand. */
export function manualClock(iso: string) {
  let current = new Date(iso);
  return {
    now: () => current,
    set: (next: string) => (current = new Date(next)),
    advance: (seconds: number) => (current = new Date(current.getTime() + seconds * 1000)),
  };
}

/**
 * A new merchant with one paymaster client on `chainId` (live on the mainnet stand-in, test otherwise)
 * and the target allowlisted there.
 */
export async function merchantSponsoringTarget(
  app: TestApp,
  chainId: number,
  clientFields: Record<string, unknown> = {},
): Promise<{ merchant: SignedInMerchant; clientId: string }> {
  const merchant = await signInNewMerchant(app);
  const { clientId } = await createPaymasterClient(app, merchant, {
    environment: chainId === MAINNET_CHAIN_ID ? 'live' : 'test',
    allowedChainIds: [chainId],
    ...clientFields,
  });
  await allowContract(app, merchant, chainId, TARGET);
  return { merchant, clientId };
}

/**
 * The receipt tracker's step for an operation signed over the fixed-gas request and included having
 * used a tenth of its maximum: 101,750,400,000,000 wei = 0.305252 USD at 3,000 USD (0.335777 with markup).
 */
export const TENTH_OF_MAXIMUM_WEI = 101_750_400_000_000n;

export function recordInclusion(
  db: Db,
  {
    chainId,
    userOpHash,
    actualGasCost = TENTH_OF_MAXIMUM_WEI,
  }: { chainId: number; userOpHash: string; actualGasCost?: bigint },
  markupBps: number,
) {
  return recordReceiptAndCharge(
    db,
    {
      chainId,
      entryPoint: ENTRY_POINT_V07_ADDRESS,
      userOpHash,
      success: true,
      actualGasCost,
      actualGasUsed: 100_000n,
      txHash: `0x${randomBytes(32).toString('hex')}`,
      blockNumber: 1n,
    },
    markupBps,
  );
}
