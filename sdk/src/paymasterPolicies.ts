import type { Client } from 'openapi-fetch';
import { unwrap, type Body } from './calls';
import { PaymasterRpcError } from './errors';
import type { paths } from './generated/openapi';

const POLICIES = '/v1/paymaster/clients/{id}/policies';
const POLICY = '/v1/paymaster/clients/{id}/policies/{policyId}';

/** One policy that would sponsor the operation now (Pimlico's `pm_validateSponsorshipPolicies` answer). */
export interface SponsorshipPolicyMatch {
  sponsorshipPolicyId: string;
  data: { name: string; author?: string; icon?: string; description?: string };
}

/** A user operation as the paymaster RPC takes it: hex strings (v0.6 or v0.7 fields). */
export type UserOperationRequest = Record<string, string | undefined>;

/**
 * A paymaster client's sponsorship policies (merchant token) and the dry run (the client's `pmc_` id):
 * the order decides, the first policy whose rules all pass sponsors.
 */
export function paymasterPolicyMethods(raw: Client<paths>) {
  const client = (clientId: string) => ({ params: { path: { id: clientId } } });
  const policy = (clientId: string, policyId: string) => ({
    params: { path: { id: clientId, policyId } },
  });
  return {
    listPaymasterPolicies: (clientId: string) => unwrap(raw.GET(POLICIES, client(clientId))),
    getPaymasterPolicy: (clientId: string, policyId: string) =>
      unwrap(raw.GET(POLICY, policy(clientId, policyId))),
    /** Appended after the client's last policy. */
    createPaymasterPolicy: (clientId: string, body: Body<typeof POLICIES, 'post'>) =>
      unwrap(raw.POST(POLICIES, { ...client(clientId), body })),
    /** Name, chains, allowlist, window, budgets, approval webhook; the position changes only by the order. */
    updatePaymasterPolicy: (clientId: string, policyId: string, body: Body<typeof POLICY, 'patch'>) =>
      unwrap(raw.PATCH(POLICY, { ...policy(clientId, policyId), body })),
    deletePaymasterPolicy: async (clientId: string, policyId: string) => {
      await unwrap(raw.DELETE(POLICY, policy(clientId, policyId)));
    },
    /** Every policy named once, the first tried first. */
    orderPaymasterPolicies: (clientId: string, policyIds: string[]) =>
      unwrap(raw.PUT(`${POLICIES}/order`, { ...client(clientId), body: { policyIds } })),
    /**
     * `pm_validateSponsorshipPolicies` (needs `clientId`): the policies that would sponsor the operation now,
     * every rule run, no budget consumed. A JSON-RPC error throws PaymasterRpcError.
     */
    validateSponsorshipPolicies: async ({
      userOperation,
      entryPoint,
      chainId,
      policyIds,
    }: {
      userOperation: UserOperationRequest;
      entryPoint: string;
      chainId: number;
      /** Only these policies (default: all of the client's). */
      policyIds?: string[];
    }): Promise<SponsorshipPolicyMatch[]> => {
      const params: unknown[] = [userOperation, entryPoint, `0x${chainId.toString(16)}`];
      if (policyIds) params.push(policyIds);
      const answer = (await unwrap(
        raw.POST('/v1/paymaster/rpc', {
          body: { jsonrpc: '2.0', id: 1, method: 'pm_validateSponsorshipPolicies', params },
        }),
      )) as unknown as { result?: SponsorshipPolicyMatch[]; error?: { code: number; message: string } };
      if (answer.error) throw new PaymasterRpcError(answer.error.code, answer.error.message);
      return answer.result ?? [];
    },
  };
}
