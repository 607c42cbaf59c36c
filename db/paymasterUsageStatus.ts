/**
 * The statuses of a paymaster usage record (SPEC "Paymaster usage status values"), defined once: the
 * schema type, the API's and the tool server's zod enums derive from this list. A request the paymaster
 * turns away is recorded as one of the `denied_*` statuses. Pure declarations.
 */
export const PAYMASTER_USAGE_STATUSES = [
  'denied_target',
  'denied_upstream',
  'denied_billing_balance',
  'denied_merchant_limit',
  'denied_gas_mode',
  'denied_chain',
  'denied_entrypoint',
  'denied_origin',
  'denied_malformed',
  'denied_rate_limit',
  'denied_spend_cap',
  'denied_global_cap',
  'denied_price_unavailable',
  'denied_merchant_rule',
  'submitted',
  'onchain_success',
  'onchain_reverted',
  'dropped',
] as const;

export type PaymasterUsageStatus = (typeof PAYMASTER_USAGE_STATUSES)[number];
