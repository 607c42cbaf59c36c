import { type Address, type Hex, getAddress, isAddress, isHex } from 'viem';
import { z } from 'zod';
import { EIP7702_INITCODE_MARKER, type PaymasterMode } from '../chain/paymasterData';

/**
 * The signing service's wire protocol (docs/architecture.md "Processes" `signer`), one definition for both ends: the API's
 * client (paymaster/rpc/signerClient.ts) sends what `signPaymasterDataParamsSchema` accepts and reads
 * answers with `signerAnswerSchema`; the service (signer/) parses requests with the same schema.
 * One JSON-RPC 2.0 method over HTTP at `<SIGNER_URL>/rpc`, bearer `SIGNER_SHARED_SECRET`, one request
 * per POST or a batch of them.
 */

export const SIGNER_METHOD = 'signer_signPaymasterData';

/**
 * A JSON-RPC 2.0 batch (a JSON array of requests, answered by an array with one response per request,
 * matched by id) holds at most this many requests: the service answers a larger one with a single
 * -32600 Invalid Request error. Its client sends no more (paymaster/rpc/signerClient.ts).
 */
export const SIGNER_MAX_BATCH_REQUESTS = 64;

/**
 * The largest `/rpc` body the service reads, a single request's or a batch's (HTTP 413 above it). One
 * request is one operation (callData ≤ 32 KiB in policy, about 66 KB as hex), so even a batch of
 * operations that large fits 15 of them; the client sends no batch larger.
 */
export const SIGNER_BODY_LIMIT_BYTES = 1024 * 1024;

const MAX_UINT48 = 2 ** 48 - 1;

const address = z
  .string()
  .refine((value) => isAddress(value, { strict: false }), 'must be a 0x address')
  .transform((value) => getAddress(value));

const bytes = z
  .string()
  .refine((value) => isHex(value, { strict: true }) && value.length % 2 === 0, 'must be 0x hex bytes');

const quantity = (bits: number) =>
  z
    .string()
    .regex(/^0x[0-9a-fA-F]+$/, 'must be a 0x hex quantity')
    .transform((value) => BigInt(value))
    .refine((value) => value < 2n ** BigInt(bits), `must fit in uint${bits}`);

const gas = quantity(128);

const timestamp = z.number().int().min(0).max(MAX_UINT48);

/** EntryPoint v0.8 reads an initCode starting with this 20-byte marker as an EIP-7702 account (wallets send `0x7702`). */
const factory = z.union([z.literal('0x7702').transform((): Address => EIP7702_INITCODE_MARKER), address]);

const userOperationSchema = z.object({
  sender: address,
  nonce: quantity(256),
  factory: factory.nullish(),
  factoryData: bytes.nullish(),
  callData: bytes,
  callGasLimit: gas,
  verificationGasLimit: gas,
  preVerificationGas: quantity(256),
  maxFeePerGas: gas,
  maxPriorityFeePerGas: gas,
  paymasterVerificationGasLimit: gas.nullish(),
  paymasterPostOpGasLimit: gas.nullish(),
  /** An EIP-7702 operation's authorization; its `address` (the delegate) is part of the signed hash. */
  eip7702Auth: z.object({ address }).passthrough().nullish(),
});

export const signPaymasterDataParamsSchema = z.tuple([
  z
    .object({
      chainId: z.number().int().positive(),
      entryPoint: address,
      entryPointVersion: z.enum(['0.7', '0.8']),
      userOp: userOperationSchema,
      mode: z.enum(['sponsored', 'erc20']),
      token: address.optional(),
      /**
       * ERC-20 mode: the rate the API priced (token base units per 1e18 wei, 0x hex); the service signs it
       * only within SIGNER_ERC20_RATE_BAND_BPS of the token's configured rate, which applies without one.
       */
      exchangeRate: quantity(256).optional(),
      validUntil: timestamp,
      validAfter: timestamp,
    })
    .refine((request) => request.validUntil > request.validAfter, {
      message: 'validUntil must be later than validAfter',
      path: ['validUntil'],
    })
    .refine((request) => (request.mode === 'erc20') === (request.token !== undefined), {
      message: 'token is required in erc20 mode and refused in sponsored mode',
      path: ['token'],
    })
    .refine((request) => request.mode === 'erc20' || request.exchangeRate === undefined, {
      message: 'exchangeRate is refused in sponsored mode',
      path: ['exchangeRate'],
    }),
]);

export type SignPaymasterDataRequest = z.infer<typeof signPaymasterDataParamsSchema>[0];

export interface SignPaymasterDataResult {
  paymaster: Address;
  paymasterData: Hex;
  paymasterVerificationGasLimit: Hex;
  paymasterPostOpGasLimit: Hex;
  mode: PaymasterMode;
}

/** What the API sends: the request before parsing (hex strings where the service reads bigints). */
export type SignPaymasterDataWireRequest = z.input<typeof signPaymasterDataParamsSchema>[0];

/** Answers: the signed paymaster fields and the mode they were signed for, or a JSON-RPC error. */
const hexQuantityAnswer = z
  .string()
  .refine((value) => isHex(value) && value.length > 2, 'must be a 0x hex quantity');

export const signedPaymasterFieldsSchema = z.object({
  paymaster: z.string().refine((value) => isAddress(value, { strict: false }), 'must be an address'),
  paymasterData: z.string().refine((value) => isHex(value), 'must be 0x hex'),
  paymasterVerificationGasLimit: hexQuantityAnswer,
  paymasterPostOpGasLimit: hexQuantityAnswer,
  mode: z.enum(['sponsored', 'erc20']),
});

export const signerAnswerSchema = z.union([
  z.object({ jsonrpc: z.literal('2.0'), result: signedPaymasterFieldsSchema }),
  z.object({ jsonrpc: z.literal('2.0'), error: z.object({ code: z.number().int(), message: z.string() }) }),
]);
