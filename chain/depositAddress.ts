import {
  type Address,
  type Hex,
  concat,
  encodeAbiParameters,
  encodePacked,
  getAddress,
  getContractAddress,
  isAddress,
  keccak256,
  numberToHex,
  size,
  zeroAddress,
} from 'viem';

/**
 * Deposit addresses: the CREATE2 address of the `Forwarder` clone that `ForwarderFactory` deploys for
 * one session on one chain (contracts/ForwarderFactory.sol). The derivation is final; changing any
 * byte here moves every future deposit address.
 *
 *   salt      = keccak256(abi.encode(bytes16 sessionId, uint256 chainId))
 *   args      = abi.encodePacked(address merchant, bytes16 sessionId)           (36 bytes)
 *   init code = OpenZeppelin Clones' clone-with-immutable-args init code for (implementation, args)
 *   address   = CREATE2(factory, salt, keccak256(init code))
 *
 * A session that holds an overpayment (`overpayment: "hold"`) has a CappedForwarder clone made by the
 * CappedForwarderFactory instead: same salt, args = abi.encodePacked(merchant, sessionId, uint64 capMicroUsd)
 * (44 bytes), so the cap is part of its address (contracts/CappedForwarder.sol).
 */

export interface PredictDepositAddressParameters {
  /** The chain's `ForwarderFactory`. */
  factory: Address;
  /** The factory's `implementation()` (the `Forwarder` every clone delegates to). */
  implementation: Address;
  /** The payment session id, a UUID string. */
  sessionId: string;
  chainId: number;
  /** The merchant payout address bound into the clone. */
  merchant: Address;
  /**
   * For a CappedForwarder (then `factory` and `implementation` are the capped ones): the most its flushes settle,
   * the session's amount in micro-dollars, 1 to 2^64 − 1. Absent for today's uncapped Forwarder.
   */
  capMicroUsd?: bigint;
}

export type PredictDepositAddressReturnType = Address;

export type PredictDepositAddressErrorType = InvalidSessionIdError | InvalidDepositParameterError;

/** The session id is not a UUID. */
export class InvalidSessionIdError extends Error {
  override name = 'InvalidSessionIdError';
  constructor(readonly sessionId: string) {
    super(`Session id "${sessionId}" is not a UUID (expected 8-4-4-4-12 hexadecimal digits).`);
  }
}

/** An address or chain id given to `predictDepositAddress` cannot be part of a deposit address. */
export class InvalidDepositParameterError extends Error {
  override name = 'InvalidDepositParameterError';
  constructor(
    readonly parameter: 'factory' | 'implementation' | 'merchant' | 'chainId' | 'capMicroUsd',
    detail: string,
  ) {
    super(`Invalid ${parameter}: ${detail}.`);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The session UUID as the `bytes16` the contracts take (lower-case hex, dashes removed). */
export function sessionIdToBytes16(sessionId: string): Hex {
  if (!UUID.test(sessionId)) throw new InvalidSessionIdError(sessionId);
  return `0x${sessionId.replaceAll('-', '').toLowerCase()}`;
}

/** The checksummed deposit address of a session on a chain, the address `ForwarderFactory.deploy` creates. */
export function predictDepositAddress({
  factory,
  implementation,
  sessionId,
  chainId,
  merchant,
  capMicroUsd,
}: PredictDepositAddressParameters): PredictDepositAddressReturnType {
  for (const [parameter, address] of [
    ['factory', factory],
    ['implementation', implementation],
    ['merchant', merchant],
  ] as const) {
    if (!isAddress(address, { strict: false }))
      throw new InvalidDepositParameterError(parameter, `"${address}"`);
  }
  // The factory refuses the zero merchant (ZeroMerchant), so no such address can ever hold a forwarder.
  if (getAddress(merchant) === zeroAddress)
    throw new InvalidDepositParameterError('merchant', 'zero address');
  if (!Number.isSafeInteger(chainId) || chainId <= 0) {
    throw new InvalidDepositParameterError('chainId', `${chainId} is not a positive integer`);
  }

  // The capped factory refuses a zero cap (ZeroCap); a uint64 holds the rest.
  if (capMicroUsd !== undefined && (capMicroUsd <= 0n || capMicroUsd >= 2n ** 64n))
    throw new InvalidDepositParameterError('capMicroUsd', `${capMicroUsd} is not between 1 and 2^64 − 1`);

  const session = sessionIdToBytes16(sessionId);
  const salt = keccak256(
    encodeAbiParameters([{ type: 'bytes16' }, { type: 'uint256' }], [session, BigInt(chainId)]),
  );
  const args =
    capMicroUsd === undefined
      ? encodePacked(['address', 'bytes16'], [merchant, session])
      : encodePacked(['address', 'bytes16', 'uint64'], [merchant, session, capMicroUsd]);
  return getContractAddress({
    opcode: 'CREATE2',
    from: factory,
    salt,
    bytecode: cloneWithImmutableArgsInitCode(implementation, args),
  });
}

/**
 * Init code of an ERC-1167 minimal proxy with immutable arguments appended to its runtime code, byte for
 * byte as OpenZeppelin 5 `Clones._cloneCodeWithImmutableArgs` builds it.
 */
function cloneWithImmutableArgsInitCode(implementation: Address, args: Hex): Hex {
  // PUSH2 <runtime length>: 45 bytes of proxy code followed by the arguments.
  const runtimeLength = size(args) + 0x2d;
  return concat([
    '0x61',
    numberToHex(runtimeLength, { size: 2 }),
    '0x3d81600a3d39f3363d3d373d3d3d363d73',
    implementation,
    '0x5af43d82803e903d91602b57fd5bf3',
    args,
  ]);
}
