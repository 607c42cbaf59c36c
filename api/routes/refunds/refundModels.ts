import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import { usdAmount } from '../../routing/decimalAmounts';

/**
 * The refund create body and path parameters (docs/service-contract.md "Refunds"); the refund object itself is
 * webhooks/refundObject.ts, shared with the refund events.
 */

export const refundPathParams = z.object({ id: z.string().uuid(), refundId: z.string().uuid() });

export const createRefundBody = z
  .object({
    amount: usdAmount
      .describe('Decimal USD, at most 6 decimals; defaults to all that is refundable')
      .optional(),
    reason: z.string().trim().min(1).max(500).optional(),
    address: z
      .string({ error: 'must be a 0x address' })
      .refine((value) => isAddress(value, { strict: false }), 'must be a 0x address')
      .transform((value) => getAddress(value))
      .describe('Where the refund goes; without it the payer gives one through `claimUrl`')
      .optional(),
    chainId: z
      .number({ error: 'must be one of the session’s chain ids' })
      .int('must be one of the session’s chain ids')
      .positive('must be one of the session’s chain ids')
      .describe('The chain the refund is paid on: one of the session’s payment options')
      .optional(),
  })
  .strict()
  .meta({ id: 'RefundCreate' });

export type CreateRefundBody = z.infer<typeof createRefundBody>;

export const claimUrlOf = (publicBaseUrl: string, claimToken: string) =>
  `${publicBaseUrl}/refund/${claimToken}`;

export const reportTransactionBody = z
  .object({
    txHash: z
      .string({ error: 'must be a 0x transaction hash' })
      .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x transaction hash')
      .describe('The transaction that sent the prepared transfer, on the refund’s chain'),
  })
  .strict()
  .meta({ id: 'RefundTransactionReport' });

export const authorizeRefundBody = z
  .object({
    signature: z
      .string({ error: 'must be 0x hex bytes' })
      .regex(/^0x(?:[0-9a-fA-F]{2})+$/, 'must be 0x hex bytes')
      .describe(
        'The payout address’s `eth_signTypedData_v4` signature of the refund’s `authorization.typedData` (ECDSA, or what its ERC-1271 contract accepts)',
      ),
  })
  .strict()
  .meta({ id: 'RefundAuthorization' });
