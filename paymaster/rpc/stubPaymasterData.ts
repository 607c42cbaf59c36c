import { numberToHex, type Address, type Hex } from 'viem';
import { encodePaymasterData, type PaymasterMode } from '../../chain/paymasterData';
import { MINIMUM_PAYMASTER_GAS } from '../../chain/paymasterData';
import type { PaymasterResult } from './signerClient';

/**
 * `pm_getPaymasterStubData`: paymaster data in the real layout with a placeholder signature, for gas
 * estimation, built without the signing service. The signature is a valid ECDSA signature by a
 * throwaway well-known key (private key 1) over a fixed hash, so the paymaster contract recovers an
 * address that is not its signer and answers SIG_VALIDATION_FAILED instead of reverting: estimation
 * works, and the data authorizes nothing.
 */
export const STUB_SIGNATURE: Hex =
  '0xe39ec76842633d94421427cc4bbb6bf129a0322660106020d589ff5adafec0542de4b5ca4f0e13b5d7d8537f5d5ed8e768cbed344ecb4aaabceaf1efd10f53451b';
/** keccak256("stablepay paymaster stub data: not an authorization"), the hash STUB_SIGNATURE signs. */
export const STUB_SIGNATURE_HASH: Hex = '0xcc538912416ff8016928ef4576de76ac5d9230df42140ebfd2329463e0708fbc';
/** The address of private key 1, which STUB_SIGNATURE recovers to from STUB_SIGNATURE_HASH. */
export const STUB_SIGNATURE_SIGNER: Address = '0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf';

/** ERC-20 stub exchange rate: 1 token base unit per ether, the smallest charge the postOp can make during estimation. */
export const STUB_EXCHANGE_RATE = 1n;

const max = (a: bigint, b: bigint) => (a > b ? a : b);

/**
 * Stub fields for `paymaster` in the mode the request implies (ERC-20 when `token` is given). The gas
 * limits are what the signing service will sign for the same operation: the operation's own
 * paymaster gas limits, raised to the signer's floors.
 */
export function buildStubPaymasterResult({
  paymaster,
  token,
  validUntil,
  validAfter,
  requestedGas,
}: {
  paymaster: Address;
  token?: Address;
  validUntil: number;
  validAfter: number;
  requestedGas: { paymasterVerificationGasLimit?: bigint; paymasterPostOpGasLimit?: bigint };
}): PaymasterResult {
  const mode: PaymasterMode = token ? 'erc20' : 'sponsored';
  const floors = MINIMUM_PAYMASTER_GAS[mode];
  const terms = token
    ? { mode: 'erc20' as const, validUntil, validAfter, token, exchangeRate: STUB_EXCHANGE_RATE }
    : { mode: 'sponsored' as const, validUntil, validAfter };
  return {
    paymaster,
    paymasterData: encodePaymasterData(terms, STUB_SIGNATURE),
    paymasterVerificationGasLimit: numberToHex(
      max(requestedGas.paymasterVerificationGasLimit ?? 0n, floors.verification),
    ),
    paymasterPostOpGasLimit: numberToHex(max(requestedGas.paymasterPostOpGasLimit ?? 0n, floors.postOp)),
  };
}
