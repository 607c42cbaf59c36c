import { getAddress, isAddress, numberToHex, type Address, type Hex } from 'viem';

/**
 * The params every paymaster method takes, `[userOp, entryPoint, chainId, context?]` (ERC-7677),
 * read into typed values. Only the shape is checked here; what is allowed is the policy's business.
 */
export const PAYMASTER_METHODS = [
  'pm_getPaymasterStubData',
  'pm_getPaymasterData',
  'pm_sponsorUserOperation',
] as const;
export type PaymasterMethod = (typeof PAYMASTER_METHODS)[number];

export function isPaymasterMethod(method: string): method is PaymasterMethod {
  return (PAYMASTER_METHODS as readonly string[]).includes(method);
}

/** Integer gas fields of an unpacked v0.7/v0.8 user operation (uint128 each once packed). */
export const GAS_FIELDS = [
  'callGasLimit',
  'verificationGasLimit',
  'preVerificationGas',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'paymasterVerificationGasLimit',
  'paymasterPostOpGasLimit',
] as const;
export type GasField = (typeof GAS_FIELDS)[number];

/** What the signed-data methods need before the paymaster can sign (SPEC); stub data needs none of them. */
export const GAS_FIELDS_REQUIRED_FOR_SIGNING = [
  'callGasLimit',
  'verificationGasLimit',
  'preVerificationGas',
  'maxFeePerGas',
] as const;

const MAX_UINT128 = (1n << 128n) - 1n;
const MAX_UINT256 = (1n << 256n) - 1n;

export interface SponsorshipUserOperation {
  sender: Address;
  nonce: bigint;
  callData: Hex;
  factory?: Hex;
  factoryData?: Hex;
  /** EIP-7702 delegate named by `eip7702Auth.address` (part of the v0.8 hash when factory is 0x7702). */
  eip7702Delegate?: Address;
  gas: Partial<Record<GasField, bigint>>;
}

export interface SponsorshipParams {
  userOp: SponsorshipUserOperation;
  /** params[0] as received, nonce and gas fields rewritten as 0x hex: what the signer receives. */
  userOpForSigner: Record<string, unknown>;
  /** params[1]: a 0x string; whether it is a supported EntryPoint is checked later. */
  entryPoint: Hex;
  chainId: number;
  /** params[3].token as sent (undefined when absent); validated later, as SPEC orders it. */
  token: unknown;
}

export type ParseParamsOutcome = { ok: true; params: SponsorshipParams } | { ok: false; detail: string };

/** Non-negative integer from a 0x hex string, a decimal string or a JSON number; undefined when unreadable. */
export function readInteger(value: unknown): bigint | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : undefined;
  if (typeof value !== 'string') return undefined;
  if (/^0x[0-9a-fA-F]{1,64}$/.test(value) || /^\d{1,78}$/.test(value)) return BigInt(value);
  return undefined;
}

/** A chain id from a 0x hex string, a decimal string or a number; undefined unless a positive safe integer. */
export function readChainId(value: unknown): number | undefined {
  const chainId = readInteger(value);
  if (chainId === undefined || chainId === 0n || chainId > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return Number(chainId);
}

/**
 * The chain a request asks for, read without validating anything else, so the client's chain check
 * can answer HTTP 403 before the JSON-RPC request itself is examined. Undefined when unreadable.
 */
export function peekRequestedChainId(body: unknown): number | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const params = (body as { params?: unknown }).params;
  return Array.isArray(params) ? readChainId(params[2]) : undefined;
}

const isHexBytes = (value: unknown): value is Hex =>
  typeof value === 'string' && /^0x(?:[0-9a-fA-F]{2})*$/.test(value);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
/** Absent in the JSON-RPC sense: not sent, or sent as null. */
const isAbsent = (value: unknown) => value === undefined || value === null;

export function parseSponsorshipParams(params: unknown[]): ParseParamsOutcome {
  const [rawUserOp, entryPoint, rawChainId, context] = params;
  const fail = (detail: string): ParseParamsOutcome => ({ ok: false, detail });

  if (!isObject(rawUserOp)) return fail('params[0] (userOp) must be an object');
  if (typeof entryPoint !== 'string' || !/^0x[0-9a-fA-F]*$/.test(entryPoint))
    return fail('params[1] (entryPoint) must be a 0x string');
  const chainId = readChainId(rawChainId);
  if (chainId === undefined)
    return fail('params[2] (chainId) must be a chain id: a 0x hex string, a decimal string or a number');
  if (!isAbsent(context) && !isObject(context))
    return fail('params[3] (context) must be an object when present');

  const { sender, nonce: rawNonce, callData, factory, factoryData, eip7702Auth } = rawUserOp;
  if (typeof sender !== 'string' || !isAddress(sender, { strict: false }))
    return fail('userOp.sender must be an address');
  const nonce = readInteger(rawNonce);
  if (nonce === undefined || nonce > MAX_UINT256) return fail('userOp.nonce must be readable as an integer');
  if (!isHexBytes(callData)) return fail('userOp.callData must be 0x-prefixed hex bytes');
  if (
    !isAbsent(factory) &&
    !(typeof factory === 'string' && (isAddress(factory, { strict: false }) || factory === '0x7702'))
  ) {
    return fail('userOp.factory must be an address (or 0x7702) when present');
  }
  if (!isAbsent(factoryData) && !isHexBytes(factoryData))
    return fail('userOp.factoryData must be 0x-prefixed hex bytes when present');
  let eip7702Delegate: Address | undefined;
  if (!isAbsent(eip7702Auth)) {
    const delegate = isObject(eip7702Auth) ? eip7702Auth.address : undefined;
    if (typeof delegate !== 'string' || !isAddress(delegate, { strict: false }))
      return fail('userOp.eip7702Auth.address must be an address');
    eip7702Delegate = getAddress(delegate);
  }

  const gas: Partial<Record<GasField, bigint>> = {};
  const userOpForSigner: Record<string, unknown> = { ...rawUserOp, nonce: numberToHex(nonce) };
  for (const field of GAS_FIELDS) {
    const raw = rawUserOp[field];
    if (isAbsent(raw)) {
      delete userOpForSigner[field];
      continue;
    }
    const value = readInteger(raw);
    if (value === undefined || value > MAX_UINT128)
      return fail(`userOp.${field} must be readable as an integer below 2^128`);
    gas[field] = value;
    userOpForSigner[field] = numberToHex(value);
  }

  return {
    ok: true,
    params: {
      userOp: {
        sender: getAddress(sender),
        nonce,
        callData,
        ...(!isAbsent(factory) && { factory: factory as Hex }),
        ...(!isAbsent(factoryData) && { factoryData: factoryData as Hex }),
        ...(eip7702Delegate && { eip7702Delegate }),
        gas,
      },
      userOpForSigner,
      entryPoint: entryPoint as Hex,
      chainId,
      token: isObject(context) && !isAbsent(context.token) ? context.token : undefined,
    },
  };
}
