import type { Address, Hex } from 'viem';
import type { PublicClients } from '../../chain/publicClients';

/**
 * What a smart account signs to be registered as a merchant's (POST /v1/merchants/me/smart-accounts):
 * it names the account, the chain that verifies it and the merchant, so a signature made for one
 * merchant cannot claim the account for another.
 */
export function smartAccountRegistrationMessage({
  merchantId,
  address,
  chainId,
}: {
  merchantId: string;
  address: Address;
  chainId: number;
}): string {
  return `StablePay: register smart account ${address} on chain ${chainId} for merchant ${merchantId}`;
}

export type SmartAccountProof = 'proven' | 'no_rpc' | 'not_proven';

/**
 * Whether `signature` is the account's own over the registration message, checked on `chainId`: ERC-1271
 * `isValidSignature` for a deployed contract account, ERC-6492 for one not deployed yet (its factory
 * call wrapped in the signature), ECDSA for a plain key (viem's verifyMessage does all three).
 */
export async function proveSmartAccountControl({
  publicClients,
  merchantId,
  address,
  chainId,
  signature,
}: {
  publicClients: PublicClients;
  merchantId: string;
  address: Address;
  chainId: number;
  signature: Hex;
}): Promise<SmartAccountProof> {
  const client = publicClients.forChain(chainId);
  if (!client) return 'no_rpc';
  const message = smartAccountRegistrationMessage({ merchantId, address, chainId });
  try {
    return (await client.verifyMessage({ address, message, signature })) ? 'proven' : 'not_proven';
  } catch {
    return 'not_proven';
  }
}
