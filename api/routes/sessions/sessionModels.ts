import { getAddress, isAddress, type Address } from 'viem';
import { z } from 'zod';
import { STABLECOIN_SYMBOLS } from '../../../chain/stablecoins';
import { decimalString, unitsOf, usdAmount } from '../../routing/decimalAmounts';
import { paymentUrlOf } from '../../sessions/createPaymentSession';
import { erc20PaymentUri } from '../../../chain/paymentOptions';
import { normaliseDecimal } from '../../../money/baseUnits';
import type { PaymentOptionRow, SessionRow } from '../../../db/sessions';
import type { SessionAmounts } from '../../../db/refunds';
import { effectiveStatus } from '../../../db/sessions';
import { SESSION_STATUSES, type SessionStatus } from '../../../db/sessionStatus';

/** Request and response shapes of payment sessions (SPEC: Session, Line item, Payment option, Session status view). */

export const lineItemSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    quantity: z.number().int('must be a whole number').positive().max(1_000_000),
    unitPrice: decimalString(6),
    total: decimalString(6),
  })
  .strict()
  .refine(
    (item) => {
      const [price, total] = [unitsOf(item.unitPrice), unitsOf(item.total)];
      if (price === undefined || total === undefined || !Number.isInteger(item.quantity)) return true;
      return price * BigInt(item.quantity) === total;
    },
    {
      message: 'total must equal quantity × unitPrice',
      path: ['total'],
    },
  )
  .meta({ id: 'LineItem' });

export const createSessionBody = z
  .object({
    amount: usdAmount.describe('Decimal USD amount, at most 6 decimals'),
    merchantName: z.string().trim().min(1).max(200).optional(),
    lineItems: z.array(lineItemSchema).max(100).optional(),
    paymentOptionSymbols: z
      .array(z.enum(STABLECOIN_SYMBOLS))
      .min(1, 'must name at least one symbol')
      .refine((symbols) => new Set(symbols).size === symbols.length, 'must not repeat a symbol')
      .optional(),
    expiresInSec: z
      .number({ error: 'must be an integer number of seconds' })
      .int('must be an integer number of seconds')
      .min(60)
      .max(604_800)
      .optional(),
    successUrl: z
      .string()
      .url('must be an absolute https URL')
      .refine(
        (value) => URL.canParse(value) && new URL(value).protocol === 'https:',
        'must be an absolute https URL',
      )
      .optional(),
    sandboxMode: z.boolean({ error: 'must be a boolean' }).optional(),
    refundAddress: z
      .string({ error: 'must be a 0x address' })
      .refine((value) => isAddress(value, { strict: false }), 'must be a 0x address')
      .transform((value) => getAddress(value))
      .describe(
        'Where refunds of this session go when a refund names no address (then no claim link is needed); never defaulted from the deposit’s sender',
      )
      .optional(),
    overpayment: z
      .enum(['settle', 'hold'], { error: 'must be "settle" or "hold"' })
      .describe(
        'What happens to money paid above `amount`: `settle` (default) sweeps it to the payout address with the rest; `hold` keeps it in the session’s deposit address, whose contract settles at most `amount`, until the merchant refunds it from there (source `forwarder`)',
      )
      .optional(),
  })
  .strict()
  .meta({ id: 'SessionCreate' });

export type CreateSessionBody = z.infer<typeof createSessionBody>;

export const sessionCreatedSchema = z
  .object({
    id: z.string().uuid(),
    paymentUrl: z.string().url(),
    status: z.enum(SESSION_STATUSES),
    expiresAt: z.string(),
    createdAt: z.string(),
  })
  .strict()
  .meta({ id: 'SessionCreated' });

export const paymentOptionSchema = z
  .object({
    chainId: z.number().int(),
    network: z.string(),
    symbol: z.enum(STABLECOIN_SYMBOLS),
    tokenAddress: z.string(),
    decimals: z.number().int(),
    amount: z.string().describe('Token base units, exact'),
    depositAddress: z.string(),
    paymentUri: z.string().describe('EIP-681 transfer request'),
  })
  .meta({ id: 'PaymentOption' });

const sessionFields = {
  id: z.string().uuid(),
  paymentUrl: z.string().url(),
  status: z.enum(SESSION_STATUSES),
  amount: z.string(),
  settledAmount: z
    .string()
    .describe(
      'USD swept to the payout address so far (decimal string; "0" before settlement). Below `amount` on an underpaid session, which is never completed',
    ),
  receivedAmount: z
    .string()
    .describe(
      'USD that arrived at the session’s deposit addresses so far, on time or late (decimal string, stablecoins at par, exact; "0" before any deposit). Above `amount` on an overpaid session',
    ),
  refundedAmount: z
    .string()
    .describe('USD paid back by succeeded refunds (decimal string, exact; "0" before any)'),
  refundableAmount: z
    .string()
    .describe(
      'USD a new refund may still take: `receivedAmount` less every refund not failed or canceled (decimal string, exact)',
    ),
  overpayment: z
    .enum(['settle', 'hold'])
    .describe(
      'What happens to money paid above `amount` (`settle`: swept with the rest; `hold`: kept for a refund)',
    ),
  merchantName: z.string().nullable(),
  sandboxMode: z.boolean(),
  expiresAt: z.string(),
  createdAt: z.string(),
  paidAt: z.string().optional(),
  txHash: z.string().optional(),
};

export const publicSessionSchema = z
  .object({
    ...sessionFields,
    lineItems: z.array(lineItemSchema),
    paymentOptions: z.array(paymentOptionSchema),
    successUrl: z.string().nullable(),
  })
  .meta({ id: 'Session' });

export const sessionSummarySchema = z
  .object({
    ...sessionFields,
    webhookDelivered: z.boolean(),
    failureReason: z.string().nullable(),
    refundAddress: z
      .string()
      .nullable()
      .describe('Where refunds that name no address go, as given at creation (null when not given)'),
  })
  .meta({ id: 'SessionSummary' });

export const sessionStatusViewSchema = z
  .object({ status: z.enum(SESSION_STATUSES), webhookDelivered: z.boolean() })
  .meta({ id: 'SessionStatusView' });

/** How a session read is made: the base URL of its payment page, the clock, what the session received and refunded. */
export interface SessionView {
  publicBaseUrl: string;
  now: Date;
  /** sessionAmountOf / sessionAmountsOf (db/refunds.ts). */
  amounts: SessionAmounts;
}

function commonFields(row: SessionRow, { publicBaseUrl, now, amounts }: SessionView) {
  return {
    id: row.id,
    paymentUrl: paymentUrlOf(publicBaseUrl, row.id),
    status: effectiveStatus(row, now) as SessionStatus,
    amount: normaliseDecimal(row.amount),
    settledAmount: normaliseDecimal(row.settled_amount),
    receivedAmount: amounts.receivedAmount,
    refundedAmount: amounts.refundedAmount,
    refundableAmount: amounts.refundableAmount,
    overpayment: row.overpayment,
    merchantName: row.merchant_name,
    sandboxMode: row.sandbox_mode,
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    ...(row.paid_at && { paidAt: row.paid_at.toISOString() }),
    ...(row.tx_hash && { txHash: row.tx_hash }),
  };
}

export function toPublicSession(row: SessionRow, options: PaymentOptionRow[], view: SessionView) {
  return {
    ...commonFields(row, view),
    lineItems: row.line_items,
    paymentOptions: options.map((option) => ({
      chainId: option.chain_id,
      network: option.network,
      symbol: option.symbol,
      tokenAddress: option.token_address,
      decimals: option.decimals,
      amount: option.amount,
      depositAddress: option.deposit_address,
      paymentUri: erc20PaymentUri({
        tokenAddress: option.token_address as Address,
        chainId: option.chain_id,
        to: option.deposit_address as Address,
        amount: BigInt(option.amount),
      }),
    })),
    successUrl: row.success_url,
  };
}

export function toSessionSummary(row: SessionRow, view: SessionView) {
  return {
    ...commonFields(row, view),
    webhookDelivered: row.webhook_delivered,
    failureReason: row.failure_reason,
    refundAddress: row.refund_address,
  };
}
