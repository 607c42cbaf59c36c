import { getAddress } from 'viem';
import { z } from 'zod';
import type { RefundRow } from '../db/refunds';
import { REFUND_SOURCES, REFUND_STATUSES } from '../db/refundStatus';
import { normaliseDecimal } from '../money/baseUnits';

/**
 * The refund object (docs/service-contract.md "Refunds"), defined once: the API answers it and the refund
 * events carry it as `data.refund` (with `claimUrl` null: the link is shown once, to the merchant).
 */

/** What the merchant sends (or sent) for a merchant-paid refund whose destination is known; null otherwise. */
function preparedTransferOf(row: RefundRow) {
  if (row.source !== 'merchant' || !row.address || !row.token_address || !row.amount_units) return null;
  // A canceled or failed refund asks for nothing: its amount is refundable again.
  if (row.status === 'canceled' || row.status === 'failed') return null;
  return {
    chainId: row.chain_id!,
    tokenAddress: getAddress(row.token_address),
    to: row.address,
    amount: row.amount_units,
  };
}

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
    transfer: z
      .object({
        chainId: z.number().int(),
        tokenAddress: z.string(),
        to: z.string(),
        amount: z.string().describe('Token base units, exact'),
      })
      .nullable()
      .describe(
        'A merchant-paid refund’s prepared ERC-20 transfer, once its address is known: send exactly this, then report the transaction',
      ),
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
    transfer: preparedTransferOf(row),
    createdAt: row.created_at.toISOString(),
  };
}
