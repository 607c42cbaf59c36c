import {
  type Delegation as KitDelegation,
  ExecutionMode,
  ROOT_AUTHORITY,
  type SmartAccountsEnvironment,
  contracts,
  createExecution,
  signDelegation,
} from '@metamask/smart-accounts-kit';
import { createCaveatBuilder, encodeDelegations } from '@metamask/smart-accounts-kit/utils';
import {
  type Address,
  type Hex,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  numberToHex,
  parseAbi,
} from 'viem';
import type { DelegationFrameworkContracts } from '../../chain/delegationFramework';
import { encodeDeleGatorExecute } from '../../chain/deleGatorAccounts';

/**
 * Delegated ERC-20 transfers (SPEC sponsorship rule 7) built with MetaMask's own toolkit
 * (`@metamask/smart-accounts-kit`: its caveat builder, delegation signing, permission-context and
 * `redeemDelegations` encoders), independent of the production encoders in chain/delegations.ts, and
 * the account call data that wraps the redemption (single execute, tuple execute, ERC-7579 SingleDefault).
 */

export type { KitDelegation };

/** The toolkit's environment for a local chain's framework (the enforcer names are the framework's). */
export function kitEnvironment(framework: DelegationFrameworkContracts): SmartAccountsEnvironment {
  return {
    DelegationManager: framework.delegationManager,
    EntryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
    SimpleFactory: framework.simpleFactory,
    implementations: { HybridDeleGatorImpl: framework.hybridDeleGatorImpl },
    caveatEnforcers: {
      ERC20TransferAmountEnforcer: framework.erc20TransferAmountEnforcer,
      TimestampEnforcer: framework.timestampEnforcer,
      RedeemerEnforcer: framework.redeemerEnforcer,
      AllowedCalldataEnforcer: framework.allowedCalldataEnforcer,
      ValueLteEnforcer: framework.valueLteEnforcer,
      NonceEnforcer: framework.nonceEnforcer,
    },
  };
}

export interface TransferGrantTerms {
  token: Address;
  allowance: bigint;
  payee: Address;
  /** Unix seconds. */
  expiresAt: number;
  redeemer: Address;
  nonce: bigint;
  validAfter?: number;
}

/** The rule-7 caveats, from the toolkit's caveat builder. */
export function transferCaveats(framework: DelegationFrameworkContracts, terms: TransferGrantTerms) {
  return createCaveatBuilder(kitEnvironment(framework))
    .addCaveat('erc20TransferAmount', { tokenAddress: terms.token, maxAmount: terms.allowance })
    .addCaveat('timestamp', { afterThreshold: terms.validAfter ?? 0, beforeThreshold: terms.expiresAt })
    .addCaveat('redeemer', { redeemers: [terms.redeemer] })
    .addCaveat('allowedCalldata', {
      startIndex: 4,
      value: encodeAbiParameters([{ type: 'address' }], [terms.payee]),
    })
    .addCaveat('valueLte', { maxValue: 0n })
    .addCaveat('nonce', { nonce: numberToHex(terms.nonce, { size: 32 }) })
    .build();
}

/** An unsigned root delegation from `delegator` to `delegate` bound by the rule-7 caveats. */
export function rootTransferDelegation(
  framework: DelegationFrameworkContracts,
  { delegator, delegate, ...terms }: TransferGrantTerms & { delegator: Address; delegate: Address },
): KitDelegation {
  return {
    delegate,
    delegator,
    authority: ROOT_AUTHORITY,
    caveats: transferCaveats(framework, terms),
    salt: numberToHex(BigInt(Date.now()) * 1000n + BigInt(Math.floor(Math.random() * 1000))),
    signature: '0x',
  };
}

/** The delegation signed by the owner's key for the manager on `chainId` (the toolkit's EIP-712 signing). */
export async function signedWithKit(
  privateKey: Hex,
  delegation: KitDelegation,
  { chainId, delegationManager }: { chainId: number; delegationManager: Address },
): Promise<KitDelegation> {
  const signature = await signDelegation({ privateKey, delegation, delegationManager, chainId });
  return { ...delegation, signature };
}

export const transferCall = (to: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });

/** `redeemDelegations` for one transfer of `token` under `delegations` (leaf first), in `mode`. */
export function redeemTransfer({
  delegations,
  token,
  payee,
  amount,
  mode = ExecutionMode.SingleDefault,
}: {
  delegations: KitDelegation[];
  token: Address;
  payee: Address;
  amount: bigint;
  mode?: ExecutionMode;
}): Hex {
  return contracts.DelegationManager.encode.redeemDelegations({
    delegations: [delegations],
    modes: [mode],
    executions: [[createExecution({ target: token, callData: transferCall(payee, amount) })]],
  });
}

export { ExecutionMode, contracts as kitContracts, createExecution, encodeDelegations };

const simpleAccountAbi = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function execute((address target, uint256 value, bytes data) call)',
]);

export type RedemptionWrapper = 'execute' | 'executeTuple' | 'erc7579Single';

/** The sender's call data making one call to the delegation manager with `data`, in `wrapper`'s form. */
export function wrapRedemption(
  wrapper: RedemptionWrapper,
  delegationManager: Address,
  data: Hex,
  value = 0n,
): Hex {
  switch (wrapper) {
    case 'execute':
      return encodeFunctionData({
        abi: simpleAccountAbi,
        functionName: 'execute',
        args: [delegationManager, value, data],
      });
    case 'executeTuple':
      return encodeFunctionData({
        abi: simpleAccountAbi,
        functionName: 'execute',
        args: [{ target: delegationManager, value, data }],
      });
    case 'erc7579Single':
      return encodeDeleGatorExecute({ target: delegationManager, value, data });
  }
}
