import {
  type Address,
  type Hex,
  encodeFunctionData,
  encodePacked,
  erc20Abi,
  getAddress,
  hexToBigInt,
  size,
  slice,
} from 'viem';
import { readContract } from 'viem/actions';
import type { Client } from 'viem';
import { ERC20PeriodTransferEnforcer } from '@metamask/delegation-abis';
import type { DelegationFrameworkContracts } from './delegationFramework';
import {
  type Caveat,
  type Delegation,
  delegationManagerAbi,
  encodePermissionContext,
  encodeRedeemDelegation,
} from './delegations';

/**
 * Periodic ERC-20 transfers (ERC-7715 `erc20-token-periodic`): a root delegation bound by the Delegation
 * Framework's `ERC20PeriodTransferEnforcer`, which lets its delegate transfer at most `periodAmount` of
 * `token` in each `periodDuration` seconds counted from `startTime`. A subscription holds one; each
 * period's charge redeems it once into that period's session deposit address (issue 42).
 */

export interface PeriodTransferTerms {
  token: Address;
  /** Base units transferable per period, summed over the period's redemptions. */
  periodAmount: bigint;
  /** Seconds. */
  periodDuration: bigint;
  /** Unix seconds: the first period begins here; nothing is transferable before. */
  startTime: bigint;
}

const PERIOD_TERMS_BYTES = 116;

export function encodePeriodTransferTerms({
  token,
  periodAmount,
  periodDuration,
  startTime,
}: PeriodTransferTerms): Hex {
  return encodePacked(
    ['address', 'uint256', 'uint256', 'uint256'],
    [token, periodAmount, periodDuration, startTime],
  );
}

/** The terms as the enforcer reads them, or undefined when they are not its 116 bytes. */
export function decodePeriodTransferTerms(terms: Hex): PeriodTransferTerms | undefined {
  if (size(terms) !== PERIOD_TERMS_BYTES) return undefined;
  return {
    token: getAddress(slice(terms, 0, 20)),
    periodAmount: hexToBigInt(slice(terms, 20, 52)),
    periodDuration: hexToBigInt(slice(terms, 52, 84)),
    startTime: hexToBigInt(slice(terms, 84, 116)),
  };
}

export function periodTransferCaveat(
  framework: Pick<DelegationFrameworkContracts, 'erc20PeriodTransferEnforcer'>,
  terms: PeriodTransferTerms,
): Caveat {
  return {
    enforcer: framework.erc20PeriodTransferEnforcer,
    terms: encodePeriodTransferTerms(terms),
    args: '0x',
  };
}

/** `redeemDelegations` call data moving `amount` of `token` from the delegator to `payee`, sent by the delegate. */
export function encodePeriodicChargeRedemption({
  delegation,
  token,
  payee,
  amount,
}: {
  delegation: Delegation;
  token: Address;
  payee: Address;
  amount: bigint;
}): Hex {
  return encodeRedeemDelegation({
    permissionContext: encodePermissionContext([delegation]),
    execution: {
      target: token,
      value: 0n,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [payee, amount] }),
    },
  });
}

export interface PeriodAllowance {
  /** Base units still transferable in the current period. */
  available: bigint;
  /** The enforcer's current period, counted from 1 at the start time. */
  currentPeriod: bigint;
  /** The delegator disabled the delegation at the manager: it is never redeemable again. */
  revoked: boolean;
}

/**
 * What the enforcer would allow now, read from the chain: the ground truth of whether a period was
 * already charged (after a crash between the redemption and its record).
 */
export async function readPeriodAllowance(
  client: Client,
  {
    framework,
    delegation,
    caveat,
  }: {
    framework: Pick<DelegationFrameworkContracts, 'delegationManager' | 'erc20PeriodTransferEnforcer'>;
    delegation: Delegation;
    caveat: Caveat;
  },
): Promise<PeriodAllowance> {
  const delegationHash = await readContract(client, {
    address: framework.delegationManager,
    abi: delegationManagerAbi,
    functionName: 'getDelegationHash',
    args: [delegation],
  });
  const [[available, , currentPeriod], revoked] = await Promise.all([
    readContract(client, {
      address: framework.erc20PeriodTransferEnforcer,
      abi: ERC20PeriodTransferEnforcer,
      functionName: 'getAvailableAmount',
      args: [delegationHash, framework.delegationManager, caveat.terms],
    }),
    readContract(client, {
      address: framework.delegationManager,
      abi: delegationManagerAbi,
      functionName: 'disabledDelegations',
      args: [delegationHash],
    }),
  ]);
  return { available, currentPeriod, revoked };
}
