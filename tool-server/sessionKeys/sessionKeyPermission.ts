import { randomBytes, randomUUID } from 'node:crypto';
import { type Address, type Hex, erc20Abi, getAddress, isAddress, numberToHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { hybridDeleGatorAbi, hybridDeleGatorAccount } from '../../chain/deleGatorAccounts';
import {
  ROOT_AUTHORITY,
  type Delegation,
  type UnsignedDelegation,
  delegationDigest,
  delegationTypedData,
  encodePermissionContext,
  erc20TransferPermissionCaveats,
  nonceEnforcerAbi,
} from '../../chain/delegations';
import { AmountPrecisionError, fromBaseUnits, toBaseUnits } from '../../money/baseUnits';
import type { StoredSessionKey } from '../credentials';
import { ToolFailure } from '../toolResults';
import type { SessionKeyChain } from './sessionKeyChains';

/**
 * A session key and its ERC-7715 permission on the merchant's DeleGator smart account (MetaMask's
 * Delegation Framework): a root delegation from the smart account to the session key's own DeleGator
 * account, bound to ERC-20 `transfer`s of one token to one payee, up to an allowance, until an expiry,
 * redeemed by that account only, without native value, at the smart account's current revocation nonce.
 * The key is generated here and only ever written to the credentials file. The smart account's owner
 * authorises the permission by signing its EIP-712 typed data (docs/decisions.md).
 */

export const DEFAULT_SESSION_KEY_VALIDITY_SEC = 24 * 3600;
export const MAX_SESSION_KEY_VALIDITY_SEC = 30 * 24 * 3600;
const ERC1271_MAGIC_VALUE = '0x1626ba7e';

export interface PermissionRequest {
  chain: SessionKeyChain;
  smartAccount: Address;
  token: Address;
  /** Decimal amount in whole tokens, e.g. "25.5". */
  allowance: string;
  payee: Address;
  validForSec: number;
  now: Date;
}

/** Checks the request against the chain and builds the pending session key (not yet signed by the owner). */
export async function prepareSessionKey({
  chain,
  smartAccount,
  token,
  allowance,
  payee,
  validForSec,
  now,
}: PermissionRequest): Promise<StoredSessionKey> {
  const { client, framework, chainId } = chain;
  await requireDeleGatorOf(chain, smartAccount);
  const [decimals, nonce, block] = await Promise.all([
    client.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' }).catch(() => {
      throw new ToolFailure(`token ${token} answers no ERC-20 decimals() on chain ${chainId}`);
    }),
    client.readContract({
      address: framework.nonceEnforcer,
      abi: nonceEnforcerAbi,
      functionName: 'currentNonce',
      args: [framework.delegationManager, smartAccount],
    }),
    client.getBlock(),
  ]);
  let allowanceUnits: bigint;
  try {
    allowanceUnits = toBaseUnits(allowance, decimals);
  } catch (error) {
    if (error instanceof AmountPrecisionError) throw new ToolFailure(`allowance: ${error.message}`);
    throw error;
  }
  if (allowanceUnits === 0n) throw new ToolFailure('allowance: must be positive');

  const privateKey = generatePrivateKey();
  const sessionKey = privateKeyToAccount(privateKey);
  const sessionAccount = hybridDeleGatorAccount({ owner: sessionKey.address, framework });
  // The chain's clock decides expiry (TimestampEnforcer), so the validity counts from its latest block.
  const validUntil = block.timestamp + BigInt(validForSec);
  const delegation: UnsignedDelegation = {
    delegate: sessionAccount.address,
    delegator: smartAccount,
    authority: ROOT_AUTHORITY,
    caveats: erc20TransferPermissionCaveats(framework, {
      token,
      allowance: allowanceUnits,
      payee,
      validUntil,
      redeemer: sessionAccount.address,
      nonce,
    }),
    salt: BigInt(`0x${randomBytes(32).toString('hex')}`),
  };
  return {
    id: randomUUID(),
    status: 'awaiting_owner_signature',
    chainId,
    smartAccount,
    privateKey,
    address: sessionKey.address,
    sessionAccount: {
      address: sessionAccount.address,
      factory: sessionAccount.factory,
      factoryData: sessionAccount.factoryData,
    },
    delegation: { ...delegation, salt: delegation.salt.toString(), signature: '0x' },
    delegationManager: framework.delegationManager,
    permission: {
      type: 'erc20-token-transfer',
      data: {
        tokenAddress: token,
        decimals,
        allowance: fromBaseUnits(allowanceUnits, decimals),
        allowanceBaseUnits: allowanceUnits.toString(),
        payee,
        nonce: nonce.toString(),
      },
      isAdjustmentAllowed: false,
    },
    createdAt: now.toISOString(),
  };
}

/** Checks the owner's signature through the smart account itself (ERC-1271), as the manager will, and activates the key. */
export async function authoriseSessionKey(
  chain: SessionKeyChain,
  pending: StoredSessionKey,
  ownerSignature: Hex,
): Promise<StoredSessionKey> {
  const digest = delegationDigest(storedDelegation(pending), {
    chainId: pending.chainId,
    delegationManager: pending.delegationManager as Address,
  });
  const answer = await chain.client
    .readContract({
      address: pending.smartAccount as Address,
      abi: hybridDeleGatorAbi,
      functionName: 'isValidSignature',
      args: [digest, ownerSignature],
    })
    .catch(() => undefined);
  if (answer !== ERC1271_MAGIC_VALUE) {
    throw new ToolFailure(
      `ownerSignature is not the smart account owner's signature of the permission's typed data (eth_signTypedData_v4 of "typedData")`,
    );
  }
  return { ...pending, status: 'active', delegation: { ...pending.delegation, signature: ownerSignature } };
}

/** The delegation of a stored key with its bigints back. */
export function storedDelegation(stored: StoredSessionKey): Delegation {
  const { delegation } = stored;
  return {
    delegate: delegation.delegate as Address,
    delegator: delegation.delegator as Address,
    authority: delegation.authority as Hex,
    caveats: delegation.caveats.map((caveat) => ({
      enforcer: caveat.enforcer as Address,
      terms: caveat.terms as Hex,
      args: caveat.args as Hex,
    })),
    salt: BigInt(delegation.salt),
    signature: delegation.signature as Hex,
  };
}

/** Unix seconds after which the permission is refused: the TimestampEnforcer's upper bound. */
export function permissionExpiry(stored: StoredSessionKey, timestampEnforcer: Address): number {
  const caveat = stored.delegation.caveats.find(
    (entry) => entry.enforcer.toLowerCase() === timestampEnforcer.toLowerCase(),
  );
  return caveat ? Number(BigInt(`0x${caveat.terms.slice(34)}`)) : 0;
}

/**
 * How a session key is shown: never its private key. Pending keys carry the typed data for the owner
 * to sign; active ones the ERC-7715-shaped grant (`context` is the permission context to redeem with).
 */
export function describeSessionKey(
  stored: StoredSessionKey,
  chain: SessionKeyChain,
): Record<string, unknown> {
  const delegation = storedDelegation(stored);
  const common = {
    id: stored.id,
    status: stored.status,
    chainId: numberToHex(stored.chainId),
    address: stored.smartAccount,
    signer: { type: 'account', data: { address: stored.sessionAccount.address } },
    permission: stored.permission,
    expiry: permissionExpiry(stored, chain.framework.timestampEnforcer),
    sessionKey: { address: stored.address },
    sessionAccount: stored.sessionAccount,
    signerMeta: { delegationManager: stored.delegationManager },
  };
  if (stored.status === 'active') return { ...common, context: encodePermissionContext([delegation]) };
  const typedData = delegationTypedData(delegation, {
    chainId: stored.chainId,
    delegationManager: stored.delegationManager as Address,
  });
  return {
    ...common,
    typedData: { ...typedData, message: { ...typedData.message, salt: typedData.message.salt.toString() } },
    next: 'Have the smart account owner sign typedData (eth_signTypedData_v4), then call create_session_key again with smartAccount, sessionKeyId and ownerSignature.',
  };
}

/** The smart account must be a deployed DeleGator of this chain's delegation manager, or nothing can redeem. */
async function requireDeleGatorOf({ client, framework, chainId }: SessionKeyChain, smartAccount: Address) {
  const code = await client.getCode({ address: smartAccount });
  if (!code || code === '0x') {
    throw new ToolFailure(`smart account ${smartAccount} has no code on chain ${chainId}: deploy it first`);
  }
  const manager = await client
    .readContract({ address: smartAccount, abi: hybridDeleGatorAbi, functionName: 'delegationManager' })
    .catch(() => undefined);
  if (!manager || getAddress(manager) !== getAddress(framework.delegationManager)) {
    throw new ToolFailure(
      `smart account ${smartAccount} is not a DeleGator account of the delegation manager ${framework.delegationManager} on chain ${chainId}`,
    );
  }
}

export const isAddressInput = (value: string) => isAddress(value, { strict: false });
