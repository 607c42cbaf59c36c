import { getAddress } from 'viem';
import { z } from 'zod';
import {
  forwarderRefundTypedDataJson,
  refundIdToBytes32,
  type ForwarderRefund,
} from '../chain/forwarderRefunds';
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

/** A forwarder refund whose destination is known, as the forwarder's `refund` call and its signature take it. */
export function forwarderRefundOf(row: RefundRow): ForwarderRefund {
  return {
    chainId: row.chain_id!,
    forwarder: getAddress(row.forwarder_address!),
    token: getAddress(row.token_address!),
    to: getAddress(row.address!),
    amount: BigInt(row.amount_units!),
    refundId: refundIdToBytes32(row.id),
  };
}

/**
 * What the payout address signs for a forwarder refund waiting for its authorization: the EIP-712 typed data
 * exactly as `eth_signTypedData_v4` takes it (uint256 values as decimal strings); null in every other state.
 */
function authorizationOf(row: RefundRow) {
  if (row.source !== 'forwarder' || row.status !== 'awaiting_authorization') return null;
  if (!row.address || !row.forwarder_address || !row.payout_address || !row.token_address) return null;
  const typedData = JSON.parse(
    forwarderRefundTypedDataJson(forwarderRefundOf(row)),
  ) as RefundAuthorization['typedData'];
  return { signer: getAddress(row.payout_address), typedData };
}

const typedDataSchema = z
  .object({
    domain: z.object({
      name: z.string(),
      version: z.string(),
      chainId: z.number().int(),
      verifyingContract: z.string(),
    }),
    types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
    primaryType: z.literal('Refund'),
    message: z.object({
      forwarder: z.string(),
      token: z.string(),
      to: z.string(),
      amount: z.string().describe('Token base units, exact, as a decimal string'),
      refundId: z.string(),
    }),
  })
  .meta({ id: 'RefundTypedData' });

const authorizationSchema = z
  .object({
    signer: z
      .string()
      .describe('The payout address bound into the forwarder: the only key whose signature is accepted'),
    typedData: typedDataSchema.describe('EIP-712 typed data, ready for `eth_signTypedData_v4`'),
  })
  .nullable()
  .describe(
    'A forwarder refund waiting for its authorization: what the payout address signs (then `POST …/authorize { signature }`); null otherwise',
  );

type RefundAuthorization = {
  signer: string;
  typedData: z.infer<typeof typedDataSchema>;
};

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
    authorization: authorizationSchema,
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
    authorization: authorizationOf(row),
    createdAt: row.created_at.toISOString(),
  };
}
