import {
  type Address,
  type Hex,
  encodeAbiParameters,
  encodeFunctionData,
  decodeAbiParameters,
  encodePacked,
  hashTypedData,
  numberToHex,
  parseAbiParameters,
} from 'viem';
import { DelegationManager } from '@metamask/delegation-abis';
import type { DelegationFrameworkContracts } from './delegationFramework';

/**
 * Delegations of MetaMask's Delegation Framework (ERC-7710), as its DelegationManager reads them:
 * the struct, its EIP-712 typed data (what the delegator signs), the permission context a redeemer
 * passes to `redeemDelegations`, and the caveats that bind a delegated ERC-20 transfer (SPEC
 * sponsorship rule 7: allowance, expiry, redeemer, payee, zero native value, nonce).
 */

/** `authority` of a root delegation: the delegator itself is the authority. */
export const ROOT_AUTHORITY: Hex = `0x${'ff'.repeat(32)}`;

/** ERC-7579 mode of one call that reverts on failure (call type single, exec type default). */
export const SINGLE_DEFAULT_MODE: Hex = `0x${'00'.repeat(32)}`;

export interface Caveat {
  enforcer: Address;
  terms: Hex;
  /** Redeemer-supplied, not signed; none of the transfer caveats read any. */
  args: Hex;
}

export interface Delegation {
  delegate: Address;
  delegator: Address;
  authority: Hex;
  caveats: Caveat[];
  salt: bigint;
  /** The delegator's signature over the typed data (ECDSA, or ERC-1271 for contract accounts). */
  signature: Hex;
}

export type UnsignedDelegation = Omit<Delegation, 'signature'>;

const DELEGATION_TYPES = {
  Delegation: [
    { name: 'delegate', type: 'address' },
    { name: 'delegator', type: 'address' },
    { name: 'authority', type: 'bytes32' },
    { name: 'caveats', type: 'Caveat[]' },
    { name: 'salt', type: 'uint256' },
  ],
  Caveat: [
    { name: 'enforcer', type: 'address' },
    { name: 'terms', type: 'bytes' },
  ],
} as const;

/** The EIP-712 typed data the delegator signs (eth_signTypedData_v4), for the manager on `chainId`. */
export function delegationTypedData(
  delegation: UnsignedDelegation,
  { chainId, delegationManager }: { chainId: number; delegationManager: Address },
) {
  return {
    domain: { name: 'DelegationManager', version: '1', chainId, verifyingContract: delegationManager },
    types: DELEGATION_TYPES,
    primaryType: 'Delegation',
    message: {
      delegate: delegation.delegate,
      delegator: delegation.delegator,
      authority: delegation.authority,
      caveats: delegation.caveats.map(({ enforcer, terms }) => ({ enforcer, terms })),
      salt: delegation.salt,
    },
  } as const;
}

/** The digest the manager checks the delegator's signature against (typed-data hash of the delegation). */
export function delegationDigest(
  delegation: UnsignedDelegation,
  domain: { chainId: number; delegationManager: Address },
): Hex {
  return hashTypedData(delegationTypedData(delegation, domain));
}

const DELEGATIONS_PARAMETER = parseAbiParameters(
  '(address delegate, address delegator, bytes32 authority, (address enforcer, bytes terms, bytes args)[] caveats, uint256 salt, bytes signature)[]',
);

/** The permission context of `redeemDelegations`: the chain of delegations, leaf first, root last. */
export function encodePermissionContext(delegations: Delegation[]): Hex {
  return encodeAbiParameters(DELEGATIONS_PARAMETER, [delegations]);
}

/** The delegations of a permission context (ERC-7715's `context`), leaf first, root last. */
export function decodePermissionContext(context: Hex): Delegation[] {
  const [delegations] = decodeAbiParameters(DELEGATIONS_PARAMETER, context);
  return delegations.map((delegation) => ({ ...delegation, caveats: [...delegation.caveats] }));
}

/** The framework's ABIs as `@metamask/delegation-abis` ships them (custom errors included, so reverts decode). */
export {
  DelegationManager as delegationManagerAbi,
  ERC20TransferAmountEnforcer as erc20TransferAmountEnforcerAbi,
  NonceEnforcer as nonceEnforcerAbi,
} from '@metamask/delegation-abis';

/** ERC-7579 single execution calldata: target (20 bytes) ‖ value (32 bytes) ‖ call data. */
export function encodeSingleExecution({
  target,
  value,
  data,
}: {
  target: Address;
  value: bigint;
  data: Hex;
}): Hex {
  return encodePacked(['address', 'uint256', 'bytes'], [target, value, data]);
}

/**
 * Call data of `redeemDelegations` for one delegated call (SingleDefault) under a permission context
 * (an ERC-7715 grant's `context`, or `encodePermissionContext` of the delegation chain).
 */
export function encodeRedeemDelegation({
  permissionContext,
  execution,
}: {
  permissionContext: Hex;
  execution: { target: Address; value: bigint; data: Hex };
}): Hex {
  return encodeFunctionData({
    abi: DelegationManager,
    functionName: 'redeemDelegations',
    args: [[permissionContext], [SINGLE_DEFAULT_MODE], [encodeSingleExecution(execution)]],
  });
}

/** What a delegated ERC-20 transfer is bound to, as signed into the root delegation's caveats. */
export interface Erc20TransferPermissionTerms {
  token: Address;
  /** Total base units the delegate may transfer under the delegation, summed over all redemptions. */
  allowance: bigint;
  /** The only recipient of the transfers. */
  payee: Address;
  /** Unix seconds; the delegation is refused from this moment on. */
  validUntil: bigint;
  /** The only account allowed to redeem (the user-operation sender). */
  redeemer: Address;
  /** The delegator's current NonceEnforcer nonce; incrementing it revokes the delegation. */
  nonce: bigint;
}

/** Byte offset of the recipient in `transfer(address to, uint256 amount)` call data: after the 4-byte selector. */
const TRANSFER_RECIPIENT_OFFSET = 4n;

/**
 * The caveats of a root delegation that allows ERC-20 `transfer(payee, amount)` calls on `token`, up to
 * `allowance` in total, until `validUntil`, redeemed by `redeemer` only, without native value, while the
 * delegator's nonce is `nonce`: the recognised set of SPEC sponsorship rule 7, in this order.
 */
export function erc20TransferPermissionCaveats(
  framework: Pick<
    DelegationFrameworkContracts,
    | 'erc20TransferAmountEnforcer'
    | 'timestampEnforcer'
    | 'redeemerEnforcer'
    | 'allowedCalldataEnforcer'
    | 'valueLteEnforcer'
    | 'nonceEnforcer'
  >,
  { token, allowance, payee, validUntil, redeemer, nonce }: Erc20TransferPermissionTerms,
): Caveat[] {
  const caveat = (enforcer: Address, terms: Hex): Caveat => ({ enforcer, terms, args: '0x' });
  return [
    caveat(framework.erc20TransferAmountEnforcer, encodePacked(['address', 'uint256'], [token, allowance])),
    caveat(framework.timestampEnforcer, encodePacked(['uint128', 'uint128'], [0n, validUntil])),
    caveat(framework.redeemerEnforcer, encodePacked(['address'], [redeemer])),
    // offset (uint256) ‖ the recipient word as it appears in the call data (abi-encoded address).
    caveat(
      framework.allowedCalldataEnforcer,
      encodeAbiParameters([{ type: 'uint256' }, { type: 'address' }], [TRANSFER_RECIPIENT_OFFSET, payee]),
    ),
    caveat(framework.valueLteEnforcer, numberToHex(0n, { size: 32 })),
    caveat(framework.nonceEnforcer, numberToHex(nonce, { size: 32 })),
  ];
}
