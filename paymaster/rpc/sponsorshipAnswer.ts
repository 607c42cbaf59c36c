import type { PaymasterUsageStatus } from '../../db/paymasterUsageStatus';
import { PAYMASTER_DENIALS, describeDenialForRpc, type PaymasterDenial } from './denials';
import { JSON_RPC_ERRORS, type JsonRpcErrorObject } from './jsonRpc';
import type { PaymasterResult } from './signerClient';

/**
 * What the paymaster RPC answers a request: the paymaster data, or a denial as its JSON-RPC error with
 * the usage row's status and reason. "Denial" is the paymaster's one word for saying no (docs/paymaster.md).
 */
export interface RpcDenial {
  error: JsonRpcErrorObject;
  /** Null for failures that are not denials of the operation (our own internal errors). */
  usageStatus: PaymasterUsageStatus | null;
  reason: string | null;
}

export type DeniedAnswer = { ok: false; denial: RpcDenial };

export type SponsorshipAnswer = { ok: true; result: PaymasterResult } | DeniedAnswer;

/** A check's denial as the RPC answers it (its JSON-RPC code, `Policy denied: ` prefix and usage status). */
export const answerDenial = (denial: PaymasterDenial): DeniedAnswer => {
  const kind = PAYMASTER_DENIALS[denial.code];
  return {
    ok: false,
    denial: {
      error: {
        code: kind.jsonRpcCode ?? JSON_RPC_ERRORS.internalError,
        message: describeDenialForRpc(denial),
      },
      usageStatus: kind.usageStatus ?? null,
      reason: denial.reason ?? denial.code,
    },
  };
};

/** A denial with its JSON-RPC error spelled out (shape errors, the signer's and our own failures). */
export const denyWithError = (
  code: number,
  message: string,
  usageStatus: PaymasterUsageStatus | null,
  reason: string | null,
): DeniedAnswer => ({
  ok: false,
  denial: { error: { code, message }, usageStatus, reason },
});

export const malformed = (code: number, message: string, reason: string): DeniedAnswer =>
  denyWithError(code, message, 'denied_malformed', reason);
