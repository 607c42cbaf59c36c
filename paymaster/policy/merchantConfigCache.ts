import type { PaymasterDecisionReads } from '../../db/paymasterDecisionReads';
import type { MerchantPaymasterConfig } from '../../db/paymasterMerchantConfig';

/**
 * The decision reads of a signing request from the merchant's cached paymaster configuration (issue 46):
 * deny rules, shared allowlist, the merchant's limits and the client's policies, without a Postgres round
 * trip while the cache is served. The cache is api/auth/listenedCache.ts keyed by merchant id, which the
 * triggers of migration 2026_11_29_0900 invalidate on every change (within a notification's round trip in
 * every process; at once in the process whose route made the change, which invalidates after its commit).
 * The repeat of a signed request (step 13) is not read here: `record_signed_paymaster_operation` finds it.
 */
export interface MerchantConfigs {
  find(merchantId: string): Promise<MerchantPaymasterConfig | undefined>;
  invalidate(merchantId: string): void;
}

export async function cachedDecisionReads(
  configs: MerchantConfigs,
  {
    merchantId,
    clientId,
    chainId,
    senders,
    denyTargets,
    allowlistTargets,
  }: {
    merchantId: string;
    /** The client's row id, whose policies are read. */
    clientId: string;
    chainId: number;
    /** Lower-case addresses. */
    senders: string[];
    denyTargets: string[];
    allowlistTargets: string[];
  },
): Promise<Omit<PaymasterDecisionReads, 'signedResult'>> {
  let config = await configs.find(merchantId);
  if (config && !config.policiesByClient.has(clientId)) {
    // A client created after the merchant's configuration was cached: read it again once.
    configs.invalidate(merchantId);
    config = await configs.find(merchantId);
  }
  if (!config) throw new Error(`no paymaster configuration read for merchant ${merchantId}`);
  const rules = config.denyRules.get(chainId);
  const denyRules: PaymasterDecisionReads['denyRules'] = [];
  if (rules) {
    for (const address of new Set(senders)) {
      if (rules.has(`sender:${address}`)) denyRules.push({ kind: 'sender', address });
    }
    for (const address of new Set(denyTargets)) {
      if (rules.has(`target:${address}`)) denyRules.push({ kind: 'target', address });
    }
  }
  const allowed = config.allowlist.get(chainId);
  return {
    denyRules,
    allowlisted: new Set(allowed ? allowlistTargets.filter((target) => allowed.has(target)) : []),
    merchantLimits: config.merchantLimits,
    policies: config.policiesByClient.get(clientId) ?? [],
  };
}
