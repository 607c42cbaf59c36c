import { type Address, type PublicClient, parseAbi, recoverAddress } from 'viem';
import { type Delegation, delegationDigest } from '../../chain/delegations';

/**
 * Whether the owner's signature of a delegation verifies on `chainId` exactly as the delegation manager
 * checks it at redemption: the EIP-712 digest in the manager's domain (name, version, this chain, this
 * manager), then ECDSA recovery to the delegator when the delegator has no code, else the delegator's
 * own ERC-1271 `isValidSignature`. A signature made for another chain or manager verifies nowhere else.
 */

export type DelegationSignatureCheck =
  | { ok: true; scheme: 'ecdsa' | 'erc1271' }
  | { ok: false; scheme: 'ecdsa' | 'erc1271'; detail: string }
  /** The chain could not be read: not a verdict on the signature. */
  | { ok: false; unavailable: true; detail: string };

const ERC1271_MAGIC_VALUE = '0x1626ba7e';
const erc1271Abi = parseAbi([
  'function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)',
]);

export async function verifyDelegationSignature(
  client: PublicClient | undefined,
  {
    delegation,
    chainId,
    delegationManager,
  }: { delegation: Delegation; chainId: number; delegationManager: Address },
): Promise<DelegationSignatureCheck> {
  if (!client) return { ok: false, unavailable: true, detail: `no RPC is configured for chain ${chainId}` };
  const digest = delegationDigest(delegation, { chainId, delegationManager });
  let code: string | undefined;
  try {
    code = await client.getCode({ address: delegation.delegator });
  } catch {
    return { ok: false, unavailable: true, detail: `chain ${chainId} could not be read` };
  }
  const deployed = code !== undefined && code !== '0x';
  const wrong = (scheme: 'ecdsa' | 'erc1271') => ({
    ok: false as const,
    scheme,
    detail: `the owner's signature of the delegation does not verify for ${delegation.delegator} on chain ${chainId} (${scheme === 'ecdsa' ? 'ECDSA' : 'ERC-1271'}; signed for another chain, manager or account?)`,
  });

  if (!deployed) {
    const recovered = await recoverAddress({ hash: digest, signature: delegation.signature }).catch(
      () => undefined,
    );
    return recovered?.toLowerCase() === delegation.delegator.toLowerCase()
      ? { ok: true, scheme: 'ecdsa' }
      : wrong('ecdsa');
  }
  try {
    const answer = await client.readContract({
      address: delegation.delegator,
      abi: erc1271Abi,
      functionName: 'isValidSignature',
      args: [digest, delegation.signature],
    });
    return answer.toLowerCase() === ERC1271_MAGIC_VALUE ? { ok: true, scheme: 'erc1271' } : wrong('erc1271');
  } catch (error) {
    // A revert is the account's answer (not a valid signature); a transport failure is not.
    if (isRevert(error)) return wrong('erc1271');
    return { ok: false, unavailable: true, detail: `chain ${chainId} could not be read` };
  }
}

function isRevert(error: unknown): boolean {
  let current = error as { name?: string; cause?: unknown } | undefined;
  while (current) {
    if (current.name === 'ContractFunctionRevertedError' || current.name === 'ContractFunctionZeroDataError')
      return true;
    current = current.cause as typeof current;
  }
  return false;
}
