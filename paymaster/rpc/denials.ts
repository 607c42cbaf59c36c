import type { PaymasterUsageStatus } from '../../db/schema';

/**
 * The paymaster's denials that both the JSON-RPC route and the bundler proxy can give, with how
 * each surface shows them (SPEC "Paymaster RPC errors"). Checks return a `PaymasterDenial`; the RPC
 * turns it into a JSON-RPC error (`Policy denied: ` prefix for policy decisions), the bundler route
 * into its HTTP status and `{ error: { message, type: 'error' } }` body without the prefix.
 */
export type PaymasterDenialCode =
  | 'paymaster_unauthorized'
  | 'paymaster_origin_not_allowed'
  | 'paymaster_chain_not_allowed'
  | 'paymaster_key_network_class_mismatch'
  | 'paymaster_entrypoint_not_supported'
  | 'paymaster_gas_mode_not_allowed'
  | 'paymaster_blocked_by_merchant_rule'
  | 'paymaster_target_not_allowed'
  | 'paymaster_billing_balance_exhausted'
  | 'paymaster_merchant_tx_cap_unpriceable'
  | 'paymaster_merchant_tx_cap_exceeded'
  | 'paymaster_global_cap_exceeded'
  | 'paymaster_spend_cap_exceeded'
  | 'paymaster_rate_limit_exceeded'
  | 'paymaster_price_unavailable'
  | 'paymaster_gas_limit_too_high'
  | 'paymaster_gas_price_too_high';

export interface PaymasterDenialKind {
  /** Usage status of the row recorded for this denial; none when no merchant is known (unauthorized). */
  usageStatus?: PaymasterUsageStatus;
  /** JSON-RPC error code on the RPC route; none when the RPC answers with HTTP only. */
  jsonRpcCode?: number;
  /** HTTP status where SPEC gives one (client-id checks on both routes, the bundler's other denials). */
  httpStatus?: number;
  /** A policy decision: the RPC message carries `Policy denied: ` (callers must not fall back). */
  policy: boolean;
}

export const PAYMASTER_DENIALS: Record<PaymasterDenialCode, PaymasterDenialKind> = {
  paymaster_unauthorized: { httpStatus: 401, policy: false },
  paymaster_origin_not_allowed: { usageStatus: 'denied_origin', httpStatus: 403, policy: false },
  paymaster_chain_not_allowed: {
    usageStatus: 'denied_chain',
    jsonRpcCode: -32602,
    httpStatus: 403,
    policy: true,
  },
  paymaster_key_network_class_mismatch: {
    usageStatus: 'denied_chain',
    jsonRpcCode: -32602,
    httpStatus: 403,
    policy: true,
  },
  paymaster_entrypoint_not_supported: { usageStatus: 'denied_entrypoint', jsonRpcCode: -32602, policy: true },
  paymaster_gas_mode_not_allowed: {
    usageStatus: 'denied_gas_mode',
    jsonRpcCode: -32600,
    httpStatus: 403,
    policy: true,
  },
  paymaster_blocked_by_merchant_rule: {
    usageStatus: 'denied_merchant_rule',
    jsonRpcCode: -32600,
    policy: true,
  },
  paymaster_target_not_allowed: { usageStatus: 'denied_target', jsonRpcCode: -32602, policy: true },
  paymaster_billing_balance_exhausted: {
    usageStatus: 'denied_billing_balance',
    jsonRpcCode: -32600,
    httpStatus: 402,
    policy: true,
  },
  // Sponsorship limits and prices (paymaster/limits/limits.ts).
  paymaster_merchant_tx_cap_unpriceable: {
    usageStatus: 'denied_price_unavailable',
    jsonRpcCode: -32600,
    policy: true,
  },
  paymaster_merchant_tx_cap_exceeded: {
    usageStatus: 'denied_merchant_limit',
    jsonRpcCode: -32600,
    policy: true,
  },
  paymaster_global_cap_exceeded: { usageStatus: 'denied_global_cap', jsonRpcCode: -32600, policy: true },
  paymaster_spend_cap_exceeded: { usageStatus: 'denied_spend_cap', jsonRpcCode: -32600, policy: true },
  paymaster_rate_limit_exceeded: { usageStatus: 'denied_rate_limit', jsonRpcCode: -32600, policy: true },
  paymaster_price_unavailable: { usageStatus: 'denied_price_unavailable', jsonRpcCode: -32600, policy: true },
  // Bounds on the operation's own fields (chain/operationBounds.ts): not an operation we sign.
  paymaster_gas_limit_too_high: { usageStatus: 'denied_malformed', jsonRpcCode: -32602, policy: true },
  paymaster_gas_price_too_high: { usageStatus: 'denied_malformed', jsonRpcCode: -32602, policy: true },
};

export const POLICY_DENIED_PREFIX = 'Policy denied: ';

/** One denial: what was denied (`code`), why in words (`detail`), and a short machine cause for the usage row. */
export interface PaymasterDenial {
  code: PaymasterDenialCode;
  detail: string;
  /** Stored as the usage row's `reason`; defaults to `code`. */
  reason?: string;
}

/** Outcome of one check: passed, or its denial (never an exception). */
export type CheckOutcome = { ok: true } | { ok: false; denial: PaymasterDenial };

export const PASSED: CheckOutcome = { ok: true };

export function denial(code: PaymasterDenialCode, detail: string, reason?: string): PaymasterDenial {
  return { code, detail, ...(reason !== undefined && { reason }) };
}

/** A denied check's outcome. */
export function denied(
  code: PaymasterDenialCode,
  detail: string,
  reason?: string,
): { ok: false; denial: PaymasterDenial } {
  return { ok: false, denial: denial(code, detail, reason) };
}

/** `paymaster_chain_not_allowed: chain 1 is not …` — the message without the policy prefix (bundler, HTTP bodies). */
export function describeDenial(denial: PaymasterDenial): string {
  return `${denial.code}: ${denial.detail}`;
}

/** The RPC's message: with `Policy denied: ` for policy decisions. */
export function describeDenialForRpc(denial: PaymasterDenial): string {
  return `${PAYMASTER_DENIALS[denial.code].policy ? POLICY_DENIED_PREFIX : ''}${describeDenial(denial)}`;
}
