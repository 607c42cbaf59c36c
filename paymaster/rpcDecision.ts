import type { PaymasterUsageStatus } from '../db/paymasterUsageStatus';
import { PAYMASTER_DENIALS, describeDenialForRpc, type PaymasterDenial } from './denials';
import { JSON_RPC_ERRORS, type JsonRpcErrorObject } from './jsonRpc';
import type { PaymasterResult } from './signerClient';

/**
 * What the paymaster RPC decided about a request: the paymaster data, or a denial as its JSON-RPC error
 * with the usage row's status and reason.
 */
export interface Rejection {
  error: JsonRpcErrorObject;
  /** Null for failures that are not decisions about the operation (our own internal errors). */
  usageStatus: PaymasterUsageStatus | null;
  reason: string | null;
}

export type Decision = { ok: true; result: PaymasterResult } | { ok: false; rejection: Rejection };

export const rejectFromDenial = (denial: PaymasterDenial): Decision => {
  const kind = PAYMASTER_DENIALS[denial.code];
  return {
    ok: false,
    rejection: {
      error: {
        code: kind.jsonRpcCode ?? JSON_RPC_ERRORS.internalError,
        message: describeDenialForRpc(denial),
      },
      usageStatus: kind.usageStatus ?? null,
      reason: denial.reason ?? denial.code,
    },
  };
};

export const reject = (
  code: number,
  message: string,
  usageStatus: PaymasterUsageStatus | null,
  reason: string | null,
): Decision => ({
  ok: false,
  rejection: { error: { code, message }, usageStatus, reason },
});

export const malformed = (code: number, message: string, reason: string): Decision =>
  reject(code, message, 'denied_malformed', reason);
