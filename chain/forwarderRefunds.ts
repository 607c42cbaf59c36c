import {
  type Address,
  type Client,
  type Hex,
  type TransactionReceipt,
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  encodeFunctionData,
  getAddress,
  hashTypedData,
  hexToBigInt,
  hexToNumber,
  isAddress,
  isAddressEqual,
  isHex,
  maxUint256,
  parseAbi,
  parseEventLogs,
  recoverAddress,
  size,
  slice,
  zeroAddress,
} from 'viem';
import { getCode, readContract, simulateContract, waitForTransactionReceipt } from 'viem/actions';
import { Forwarder } from '../contracts/artifacts';
import type { OperatorClient } from './operatorChains';

/**
 * Refunds from a forwarder (issue 41): money still at a deposit address goes back only on the merchant's
 * word. The payout address bound into the clone signs the EIP-712 struct
 *
 *   Refund(address forwarder,address token,address to,uint256 amount,bytes32 refundId)
 *
 * in the domain { name "StablePay Forwarder", version "1", chainId, verifyingContract = the forwarder clone },
 * and `Forwarder.refund` checks it (contracts/Forwarder.sol): ECDSA for an address without code, ERC-1271 for
 * a contract. Anyone may relay a signed refund; the operator does, and pays the gas. Each refund id pays once.
 * The choices: docs/decisions.md "Refunds from the forwarder: the contract and its chain module (issue 41, 2026-11-29)".
 */

export const FORWARDER_DOMAIN_NAME = 'StablePay Forwarder';
export const FORWARDER_DOMAIN_VERSION = '1';

/** The fields of the forwarder's domain, in the order EIP-712 hashes them (`eip712Domain()` fields 0x0f). */
const FORWARDER_DOMAIN_TYPE = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
] as const;

export const FORWARDER_REFUND_TYPES = {
  Refund: [
    { name: 'forwarder', type: 'address' },
    { name: 'token', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'amount', type: 'uint256' },
    { name: 'refundId', type: 'bytes32' },
  ],
} as const;

/** One refund from one forwarder, as the payout address signs it. */
export interface ForwarderRefund {
  chainId: number;
  /** The session's deposit address (the forwarder clone) on `chainId`. */
  forwarder: Address;
  token: Address;
  /** Where the tokens go: the payer's address. */
  to: Address;
  /** Token base units. */
  amount: bigint;
  /** `refundIdToBytes32(refund.id)`. */
  refundId: Hex;
}

export interface SignedForwarderRefund {
  refund: ForwarderRefund;
  signature: Hex;
}

/** A refund field that no forwarder would accept (checked before anything is signed, read or sent). */
export class InvalidForwarderRefundError extends Error {
  override name = 'InvalidForwarderRefundError';
  constructor(
    readonly field: keyof ForwarderRefund | 'refundUuid' | 'merchant' | 'signature',
    detail: string,
  ) {
    super(`Invalid refund ${field}: ${detail}.`);
  }
}

/** The relay was asked to send a refund on a chain other than the one its signature names. */
export class ForwarderRefundChainMismatchError extends Error {
  override name = 'ForwarderRefundChainMismatchError';
  constructor(
    readonly refundChainId: number,
    readonly clientChainId: number,
  ) {
    super(`The refund is signed for chain ${refundChainId} but the client sends on chain ${clientChainId}.`);
  }
}

/** No forwarder code at the deposit address yet: deploy it through the factory first (anyone may). */
export class ForwarderNotDeployedError extends Error {
  override name = 'ForwarderNotDeployedError';
  constructor(
    readonly forwarder: Address,
    readonly chainId: number,
  ) {
    super(
      `No forwarder is deployed at ${forwarder} on chain ${chainId}; deploy it through the ForwarderFactory before relaying a refund.`,
    );
  }
}

/**
 * The forwarder refuses this refund (found by simulation, so no transaction was sent and no gas spent):
 * `errorName` is the contract's custom error (InvalidRefundSignature, RefundIdUsed, RefundExceedsBalance,
 * RefundToZeroAddress, ZeroRefund, NotAClone) or `unknown` for a revert it did not name.
 */
export class ForwarderRefundRefusedError extends Error {
  override name = 'ForwarderRefundRefusedError';
  constructor(
    readonly forwarder: Address,
    readonly errorName: string,
    readonly errorArgs: readonly unknown[],
  ) {
    super(`Forwarder ${forwarder} refuses the refund: ${describeRefusal(errorName, errorArgs)}.`);
  }
}

/** The refund transaction was mined but did not pay the refund it was sent for. */
export class ForwarderRefundFailedError extends Error {
  override name = 'ForwarderRefundFailedError';
  constructor(
    readonly txHash: Hex,
    detail: string,
  ) {
    super(`Refund transaction ${txHash} ${detail}.`);
  }
}

/**
 * ERC-1271 with its answer read as a whole word: SignatureChecker accepts only the selector followed by zero
 * bytes, which a `bytes4` decoding would not check.
 */
const erc1271WordAbi = parseAbi([
  'function isValidSignature(bytes32 hash, bytes signature) view returns (bytes32)',
]);
const ERC1271_MAGIC_WORD = `0x1626ba7e${'0'.repeat(56)}`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/**
 * The refund id a forwarder records for a refund: the refund's UUID as its 16 bytes, followed by 16 zero
 * bytes (Solidity's `bytes32(bytes16(uuid))`). Reversible (refundIdToUuid), and a wallet showing the
 * struct shows the refund's own id in its first 32 hex digits.
 */
export function refundIdToBytes32(refundUuid: string): Hex {
  if (!UUID.test(refundUuid))
    throw new InvalidForwarderRefundError(
      'refundUuid',
      `"${refundUuid}" is not a UUID (expected 8-4-4-4-12 hexadecimal digits)`,
    );
  return `0x${refundUuid.replaceAll('-', '').toLowerCase()}${'0'.repeat(32)}`;
}

/** The refund UUID of a refund id written by refundIdToBytes32, or undefined for any other bytes32. */
export function refundIdToUuid(refundId: Hex): string | undefined {
  if (!BYTES32.test(refundId) || !/0{32}$/.test(refundId)) return undefined;
  const hex = refundId.slice(2, 34).toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Checks every field against what the forwarder accepts and answers it with checksummed addresses. */
export function checkForwarderRefund(refund: ForwarderRefund): ForwarderRefund {
  const { chainId, forwarder, token, to, amount, refundId } = refund;
  if (!Number.isSafeInteger(chainId) || chainId <= 0)
    throw new InvalidForwarderRefundError('chainId', `${chainId} is not a positive integer`);
  for (const [field, value] of [
    ['forwarder', forwarder],
    ['token', token],
    ['to', to],
  ] as const) {
    if (typeof value !== 'string' || !isAddress(value, { strict: false }))
      throw new InvalidForwarderRefundError(field, `"${String(value)}" is not an address`);
    if (isAddressEqual(value, zeroAddress)) throw new InvalidForwarderRefundError(field, 'the zero address');
  }
  if (typeof amount !== 'bigint' || amount <= 0n || amount > maxUint256)
    throw new InvalidForwarderRefundError(
      'amount',
      `${String(amount)} is not a positive uint256 of base units`,
    );
  if (typeof refundId !== 'string' || !BYTES32.test(refundId))
    throw new InvalidForwarderRefundError('refundId', `"${String(refundId)}" is not 32 bytes of hex`);
  return {
    chainId,
    forwarder: getAddress(forwarder),
    token: getAddress(token),
    to: getAddress(to),
    amount,
    refundId: refundId.toLowerCase() as Hex,
  };
}

/**
 * The EIP-712 typed data the payout address signs (`eth_signTypedData_v4`, viem's `signTypedData`). Its
 * domain's verifyingContract is the forwarder clone itself, so a signature is good at one deposit address
 * on one chain only.
 */
export function forwarderRefundTypedData(refund: ForwarderRefund) {
  const { chainId, forwarder, token, to, amount, refundId } = checkForwarderRefund(refund);
  return {
    domain: {
      name: FORWARDER_DOMAIN_NAME,
      version: FORWARDER_DOMAIN_VERSION,
      chainId,
      verifyingContract: forwarder,
    },
    types: FORWARDER_REFUND_TYPES,
    primaryType: 'Refund',
    message: { forwarder, token, to, amount, refundId },
  } as const;
}

/**
 * The same typed data as the JSON string `eth_signTypedData_v4` takes (the EIP712Domain type spelled out,
 * the amount a decimal string): what a browser wallet (EIP-1193) is asked to sign.
 */
export function forwarderRefundTypedDataJson(refund: ForwarderRefund): string {
  const { domain, types, primaryType, message } = forwarderRefundTypedData(refund);
  return JSON.stringify({
    domain,
    types: { EIP712Domain: FORWARDER_DOMAIN_TYPE, ...types },
    primaryType,
    message: { ...message, amount: message.amount.toString() },
  });
}

/** The digest the forwarder checks the signature against (`Forwarder.refundDigest`). */
export function forwarderRefundDigest(refund: ForwarderRefund): Hex {
  return hashTypedData(forwarderRefundTypedData(refund));
}

export type ForwarderRefundSignatureCheck = { valid: true } | { valid: false; reason: string };

/** secp256k1 n / 2: OpenZeppelin's ECDSA refuses any s above it (malleable signatures). */
const SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
/** ERC-6492's suffix: a counterfactual account's wrapped signature, which the forwarder does not unwrap. */
const ERC6492_SUFFIX = '6492649264926492649264926492649264926492649264926492649264926492';

/**
 * Off-chain twin of the forwarder's signature check (OpenZeppelin `SignatureChecker.isValidSignatureNow`),
 * answering whether `Forwarder.refund` would accept `signature` from the payout address `merchant`, and why
 * not. `merchant` must be the payout address bound into the forwarder (the session option's payout address);
 * the forwarder need not be deployed. An address without code signs with a 65-byte ECDSA signature (v 27 or
 * 28, low s); an address with code answers ERC-1271 `isValidSignature` with the signature as given.
 *
 * Deliberately not viem's `verifyTypedData`: it also accepts what the forwarder refuses (ERC-6492 signatures
 * of undeployed accounts, high-s or v 0/1 ECDSA, and the key's ECDSA signature when an account with code
 * refuses it), and an authorization accepted here must never revert on-chain for its signature.
 */
export async function verifyForwarderRefundSignature(
  client: Client,
  { refund, merchant, signature }: SignedForwarderRefund & { merchant: Address },
): Promise<ForwarderRefundSignatureCheck> {
  const digest = forwarderRefundDigest(refund);
  if (!isAddress(merchant, { strict: false }))
    throw new InvalidForwarderRefundError(
      'merchant',
      `payout address "${String(merchant)}" is not an address`,
    );
  if (typeof signature !== 'string' || !isHex(signature, { strict: true }) || signature.length % 2 !== 0)
    return { valid: false, reason: 'the signature is not hex bytes' };
  const code = await getCode(client, { address: merchant });
  if (code && code !== '0x') return verifyErc1271(client, merchant, digest, signature);
  if (signature.toLowerCase().endsWith(ERC6492_SUFFIX))
    return {
      valid: false,
      reason:
        'an ERC-6492 signature of an undeployed account: the payout account must be deployed before it can authorize a refund',
    };
  return verifyEcdsa(merchant, digest, signature);
}

async function verifyEcdsa(
  merchant: Address,
  digest: Hex,
  signature: Hex,
): Promise<ForwarderRefundSignatureCheck> {
  if (size(signature) !== 65)
    return {
      valid: false,
      reason: `the payout address has no code, so it signs with a 65-byte ECDSA signature (got ${size(signature)} bytes)`,
    };
  const s = hexToBigInt(slice(signature, 32, 64));
  const v = hexToNumber(slice(signature, 64, 65));
  if (v !== 27 && v !== 28) return { valid: false, reason: `ECDSA v must be 27 or 28 (got ${v})` };
  if (s > SECP256K1_HALF_N)
    return {
      valid: false,
      reason: 'ECDSA s is in the upper half of the curve order (a malleable signature)',
    };
  const signer = await recoverAddress({ hash: digest, signature }).catch(() => undefined);
  if (!signer) return { valid: false, reason: 'the signature recovers no address' };
  if (!isAddressEqual(signer, merchant))
    return { valid: false, reason: `signed by ${signer}, not by the payout address ${getAddress(merchant)}` };
  return { valid: true };
}

async function verifyErc1271(
  client: Client,
  merchant: Address,
  digest: Hex,
  signature: Hex,
): Promise<ForwarderRefundSignatureCheck> {
  const answer = await readContract(client, {
    address: merchant,
    abi: erc1271WordAbi,
    functionName: 'isValidSignature',
    args: [digest, signature],
  }).catch((error: unknown) => {
    // A reverting or non-conforming account refuses (as SignatureChecker's failed staticcall or short answer
    // does); a node that cannot answer is no refusal and is thrown.
    const refused =
      error instanceof BaseError &&
      error.walk(
        (cause) =>
          cause instanceof ContractFunctionRevertedError ||
          cause instanceof ContractFunctionZeroDataError ||
          (cause instanceof BaseError && cause.name.startsWith('AbiDecoding')),
      );
    if (refused) return undefined;
    throw error;
  });
  if (answer === ERC1271_MAGIC_WORD) return { valid: true };
  const answered =
    answer === undefined ? 'reverted or gave no ERC-1271 answer' : `ERC-1271 answered ${answer}`;
  return {
    valid: false,
    reason: `the payout contract ${getAddress(merchant)} does not accept the signature (${answered})`,
  };
}

/** Whether the forwarder has already paid this refund id (a relayed refund, or a replay that would revert). */
export function isForwarderRefundIdUsed(
  client: Client,
  { forwarder, refundId }: Pick<ForwarderRefund, 'forwarder' | 'refundId'>,
): Promise<boolean> {
  return readContract(client, {
    address: forwarder,
    abi: Forwarder.abi,
    functionName: 'refundIdUsed',
    args: [refundId],
  });
}

/** The `refund` call a relayer sends: to the forwarder, with the refund and its signature. */
export function encodeForwarderRefundCall({ refund, signature }: SignedForwarderRefund): {
  to: Address;
  data: Hex;
} {
  const { forwarder, token, to, amount, refundId } = checkForwarderRefund(refund);
  if (!isHex(signature, { strict: true }))
    throw new InvalidForwarderRefundError('signature', 'not hex bytes');
  return {
    to: forwarder,
    data: encodeFunctionData({
      abi: Forwarder.abi,
      functionName: 'refund',
      args: [token, to, amount, refundId, signature],
    }),
  };
}

/**
 * Broadcasts the call from the operator account and answers its transaction hash. Required, not defaulted:
 * every operator transaction takes its nonce under the key's lock (activities/lockedSends.ts
 * `sendWithNextNonce`, or sign-record-broadcast as a flush does), and a send outside it could take a
 * flush's nonce.
 */
export type SendRefundCall = (call: { to: Address; data: Hex }) => Promise<Hex>;

/**
 * Relays a signed refund from the operator account: checks it is for this client's chain, that the forwarder
 * is deployed, and simulates it (a refusal throws ForwarderRefundRefusedError and sends nothing), then sends
 * `refund` and answers the transaction hash. Sending it twice is harmless: the second reverts RefundIdUsed.
 */
export async function relayForwarderRefund(
  client: OperatorClient,
  signed: SignedForwarderRefund,
  { send }: { send: SendRefundCall },
): Promise<Hex> {
  const refund = checkForwarderRefund(signed.refund);
  const call = encodeForwarderRefundCall({ refund, signature: signed.signature });
  if (client.chain.id !== refund.chainId)
    throw new ForwarderRefundChainMismatchError(refund.chainId, client.chain.id);
  const code = await getCode(client, { address: refund.forwarder });
  if (!code || code === '0x') throw new ForwarderNotDeployedError(refund.forwarder, refund.chainId);
  try {
    await simulateContract(client, {
      account: client.account,
      address: refund.forwarder,
      abi: Forwarder.abi,
      functionName: 'refund',
      args: [refund.token, refund.to, refund.amount, refund.refundId, signed.signature],
    });
  } catch (error) {
    const reverted =
      error instanceof BaseError
        ? error.walk((cause) => cause instanceof ContractFunctionRevertedError)
        : undefined;
    if (reverted instanceof ContractFunctionRevertedError)
      throw new ForwarderRefundRefusedError(
        refund.forwarder,
        reverted.data?.errorName ?? 'unknown',
        reverted.data?.args ?? [],
      );
    throw error;
  }
  return send(call);
}

export interface ForwarderRefundReceipt {
  txHash: Hex;
  blockNumber: bigint;
  /** Gas the relayer paid for: gasUsed × effectiveGasPrice wei (platform gas, billed like other platform gas). */
  gasUsed: bigint;
  effectiveGasPrice: bigint;
}

/**
 * Waits for a relayed refund's receipt and answers it once the forwarder's `Refunded` event shows exactly this
 * refund paid (refund id, token, recipient and amount); a revert or any other outcome is
 * ForwarderRefundFailedError.
 */
export async function awaitForwarderRefund(
  client: Client,
  { refund, txHash, timeoutMs = 120_000 }: { refund: ForwarderRefund; txHash: Hex; timeoutMs?: number },
): Promise<ForwarderRefundReceipt> {
  const expected = checkForwarderRefund(refund);
  const receipt: TransactionReceipt = await waitForTransactionReceipt(client, {
    hash: txHash,
    timeout: timeoutMs,
  });
  if (receipt.status !== 'success') throw new ForwarderRefundFailedError(txHash, 'reverted');
  const paid = parseEventLogs({ abi: Forwarder.abi, eventName: 'Refunded', logs: receipt.logs }).find(
    (log) =>
      isAddressEqual(log.address, expected.forwarder) &&
      log.args.refundId.toLowerCase() === expected.refundId &&
      isAddressEqual(log.args.token, expected.token) &&
      isAddressEqual(log.args.to, expected.to) &&
      log.args.amount === expected.amount,
  );
  if (!paid)
    throw new ForwarderRefundFailedError(
      txHash,
      `emitted no Refunded event of forwarder ${expected.forwarder} for refund ${expected.refundId}`,
    );
  return {
    txHash,
    blockNumber: receipt.blockNumber,
    gasUsed: receipt.gasUsed,
    effectiveGasPrice: receipt.effectiveGasPrice,
  };
}

function describeRefusal(errorName: string, args: readonly unknown[]): string {
  switch (errorName) {
    case 'InvalidRefundSignature':
      return 'the signature is not the payout address’s over this refund (InvalidRefundSignature)';
    case 'RefundIdUsed':
      return `refund id ${String(args[0])} was already paid (RefundIdUsed)`;
    case 'RefundExceedsBalance':
      return `the amount ${String(args[0])} is above the forwarder's balance ${String(args[1])} (RefundExceedsBalance)`;
    case 'RefundToZeroAddress':
      return 'the recipient is the zero address (RefundToZeroAddress)';
    case 'ZeroRefund':
      return 'the amount is zero (ZeroRefund)';
    case 'NotAClone':
      return 'the address is the Forwarder implementation, not a deposit address (NotAClone)';
    default:
      return `it reverted (${errorName})`;
  }
}
