/**
 * The statuses and sources of a refund (docs/service-contract.md "Refunds"), defined once: the schema type, the API's zod enums
 * and the refund workflow derive from these lists. The CHECK constraints of migration 2026_11_28_1600
 * spell the same lists out. Pure declarations, safe to import from workflow code.
 */
export const REFUND_STATUSES = [
  'awaiting_address',
  'awaiting_authorization',
  'awaiting_payment',
  'processing',
  'succeeded',
  'failed',
  'canceled',
] as const;

export type RefundStatus = (typeof REFUND_STATUSES)[number];

/** Nothing has moved yet: the refund may still be canceled. */
export const CANCELABLE_REFUND_STATUSES = [
  'awaiting_address',
  'awaiting_authorization',
  'awaiting_payment',
] as const satisfies readonly RefundStatus[];

/** A refund that can no longer pay anything: its amount is refundable again. */
export const RELEASED_REFUND_STATUSES = ['failed', 'canceled'] as const satisfies readonly RefundStatus[];

/**
 * Where the money comes from: `forwarder` (funds still in the session's forwarder, moved on the payout
 * address's signed authorization) or `merchant` (funds already settled; the merchant sends the transfer).
 */
export const REFUND_SOURCES = ['forwarder', 'merchant'] as const;

export type RefundSource = (typeof REFUND_SOURCES)[number];
