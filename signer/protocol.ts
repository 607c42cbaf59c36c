import { type Address, type Hex, getAddress, isAddress, isHex } from 'viem';
import { z } from 'zod';
import { EIP7702_INITCODE_MARKER, type PaymasterMode } from '../chain/paymasterData';

/**
 * The signing service's wire protocol (docs/architecture.md "Processes" `signer`), one definition for both ends: the API's
 * client (paymaster/rpc/signerClient.ts) sends what `signPaymasterDataParamsSchema` accepts and reads
 * answers with `signerAnswerSchema`; the service (signer/) parses requests with the same schema.
 * One JSON-RPC 2.0 method over HTTP at `<SIGNER_URL>/rpc`, bearer `SIGNER_SHARED_SECRET`.
 */

export const SIGNER_METHOD = 'signer_signPaymasterData';

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
