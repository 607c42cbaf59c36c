import type { PaymasterClient } from '../policy/clientChecks';
import { dryRunPolicies, type DryRunDependencies } from './dryRunPolicies';
import {
  JSON_RPC_ERRORS,
  jsonRpcError,
  jsonRpcResult,
  type JsonRpcRequestEnvelope,
  type JsonRpcResponse,
} from './jsonRpc';

/**
 * `pm_validateSponsorshipPolicies` (Pimlico's method): params `[userOperation, entryPoint, chainId,
 * sponsorshipPolicyIds?]` → `[{ sponsorshipPolicyId, data: { name } }]`, the client's policies (or those
 * named) that would sponsor the operation now, in the client's order (dryRunPolicies.ts). Each call takes
 * one of the client's dry runs (`PAYMASTER_DRY_RUNS_PER_CLIENT_PER_MINUTE`, shared by the dashboard's
 * check); beyond them, -32600 `Policy denied: paymaster_rate_limit_exceeded (dry runs: …; retry after N s)`.
 * Nothing else is consumed and nothing is recorded: no usage row, no counter.
 */

export const DRY_RUN_METHOD = 'pm_validateSponsorshipPolicies';

export interface DryRunRate {
  /** Takes one of the key's dry runs: undefined when taken, else the seconds until one is free (api/requestRateLeases.ts). */
  rate: { take(key: string): Promise<number | undefined> };
  perMinute: number;
}

/** The JSON-RPC answer when the client's dry runs are used up, or undefined when one was taken. */
export async function takeDryRun(
  dryRuns: DryRunRate | undefined,
  clientId: string,
): Promise<number | undefined> {
  return dryRuns?.rate.take(clientId);
}

export const dryRunRateMessage = (perMinute: number, retryAfterSec: number) =>
  `paymaster_rate_limit_exceeded (dry runs: ${perMinute} per minute per client; retry after ${retryAfterSec} s)`;

/** A list of policy ids, or undefined when absent; a string for what is wrong otherwise. */
export function readPolicyIds(value: unknown): { ok: true; ids?: string[] } | { ok: false } {
  if (value === undefined || value === null) return { ok: true };
  if (!Array.isArray(value) || value.length > 100 || !value.every((id) => typeof id === 'string'))
    return { ok: false };
  return { ok: true, ids: value as string[] };
}

export async function answerValidateSponsorshipPolicies(
  deps: DryRunDependencies & { dryRuns?: DryRunRate },
  client: PaymasterClient,
  { id, params }: JsonRpcRequestEnvelope,
): Promise<JsonRpcResponse> {
  const retryAfterSec = await takeDryRun(deps.dryRuns, client.clientId);
  if (retryAfterSec !== undefined) {
    return jsonRpcError(id, {
      code: JSON_RPC_ERRORS.invalidRequest,
      message: `Policy denied: ${dryRunRateMessage(deps.dryRuns!.perMinute, retryAfterSec)}`,
    });
  }
  const policyIds = readPolicyIds(params[3]);
  if (!policyIds.ok) {
    return jsonRpcError(id, {
      code: JSON_RPC_ERRORS.invalidParams,
      message: 'Invalid params: params[3] (sponsorshipPolicyIds) must be an array of policy ids when present',
    });
  }
  const outcome = await dryRunPolicies(deps, client, {
    params,
    ...(policyIds.ids && { policyIds: policyIds.ids }),
  });
  if (!outcome.ok) return jsonRpcError(id, outcome.denial.error);
  return jsonRpcResult(
    id,
    outcome.policies
      .filter((policy) => policy.sponsors)
      .map((policy) => ({ sponsorshipPolicyId: policy.policyId, data: { name: policy.name } })),
  );
}
