import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import type { RefundRow } from '../../../db/refunds';
import { REFUND_SOURCES, REFUND_STATUSES } from '../../../db/refundStatus';
import { normaliseDecimal } from '../../../money/baseUnits';
import { usdAmount } from '../../routing/decimalAmounts';

/** The refund object, its create body and path parameters (docs/service-contract.md "Refunds"). */

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

export const refundSchema = z
  .object({
    id: z.string().uuid(),
    sessionId: z.string().uuid(),
    amount: z.string().describe('Decimal USD (stablecoins at par)'),
    reason: z.string().nullable(),
    status: z.enum(REFUND_STATUSES),
    source: z
      .enum(REFUND_SOURCES)
      .describe(
        '`forwarder`: paid back from the session’s forwarder on the payout address’s authorization (funds not swept yet); `merchant`: the merchant sends the transfer (funds already settled)',
      ),
    claimUrl: z
      .string()
      .nullable()
      .describe(
        'The page where the payer gives the refund address; shown once, in the answer that created the refund (null on reads)',
      ),
    address: z.string().nullable(),
    chainId: z.number().int().nullable().describe('Null while the payer has not chosen a chain'),
    token: z.string().describe('Stablecoin symbol the refund is paid in: the one the customer paid with'),
    txHash: z.string().nullable(),
    failureReason: z.string().nullable(),
    createdAt: z.string(),
  })
  .strict()
  .meta({ id: 'Refund' });

export type RefundModel = z.infer<typeof refundSchema>;

export function toRefundModel(row: RefundRow, claimUrl: string | null = null): RefundModel {
  return {
    id: row.id,
    sessionId: row.session_id,
    amount: normaliseDecimal(row.amount),
    reason: row.reason,
    status: row.status,
    source: row.source,
    claimUrl,
    address: row.address,
    chainId: row.chain_id,
    token: row.token_symbol,
    txHash: row.tx_hash,
    failureReason: row.failure_reason,
    createdAt: row.created_at.toISOString(),
  };
}

export const claimUrlOf = (publicBaseUrl: string, claimToken: string) =>
  `${publicBaseUrl}/refund/${claimToken}`;
