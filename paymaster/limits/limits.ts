import type { Config } from '../../config';
import type { Db } from '../../db/client';
import { randomUUID } from 'node:crypto';
import { networkByChainId } from '../../config/networks';
import { effectiveLimits, merchantLimits, platformLimits } from './limitViews';
import {
  countedRules,
  type CountedRule,
  type LimitTerms,
  merchantPerTransactionCap,
  type OperationPrice,
  prepaidReservationRule,
} from './limitRules';
import {
  type ConsumptionBasis,
  type CounterConsumption,
  findMerchantLimits,
  type HoldTerms,
  limitCountersUsage,
} from '../../db/paymasterLimits';
import type { SponsorshipMode } from '../../db/schema';
import { denial, type PaymasterDenial } from '../rpc/denials';
import type { EthUsdPrices } from '../pricing/prices';
import { maxGasCostWei, weiToMicroUsd } from '../../money/gasPricing';
import { microToUsd, usdToMicro, withMarkup } from '../../money/microUsd';
import { feedAnswerToDecimal } from '../../money/usdPriceAnswers';
import { type BudgetedPolicy, policyBudgetRules } from './policyBudgets';

/**
 * Sponsorship limits (SPEC "Sponsorship limits", docs/paymaster.md "Order of checks"), enforced in that order (their views,
 * GET and PATCH, are paymaster/limits/limitViews.ts; the rules one by one paymaster/limits/limitRules.ts) — prepaid balance reservation (mainnets) → merchant per-transaction cap
 * (priced) → platform daily budget of the network class → the merchant's share of it → the merchant's
 * daily cap → the client's daily cap → per-sender daily USD cap → per-sender hourly operation limit.
 * Signed-data methods consume: operations at once, dollars as holds on the operation's maximum cost
 * that last until its validUntil and are settled at the actual cost on receipt (db/gasCharges.ts).
 * Stub data only reads. One call of `consume_paymaster_limits` takes everything or nothing. After them
 * come the budgets of the policy that sponsors (paymaster/limits/policyBudgets.ts): the client's
 * candidate policies are tried in order, each attempt the limits plus that policy's budgets.
 */

/** The hourly window a limit counts in (the per-sender operations limit). */
export const startOfUtcHour = (now: Date): Date => {
  const start = new Date(now.getTime());
  start.setUTCMinutes(0, 0, 0);
  return start;
};
const startOfUtcDay = (now: Date): Date => {
  const start = new Date(now.getTime());
  start.setUTCHours(0, 0, 0, 0);
  return start;
};

/** What the usage row records about the price of the operation (decimal strings). */
export interface UsdSnapshot {
  ethUsdPrice: string;
  estimatedGasCostWei: string;
  /** Estimated cost plus markup. */
  estimatedCostUsd: string;
}

export interface SponsorshipLimitRequest {
  merchantId: string;
  /** The publishable id of the client asking (its daily cap). */
  clientId: string;
  chainId: number;
  /** Lower-case address. */
  sender: string;
  /**
   * Lower-case address of the delegator of a delegated transfer (SPEC rule 7): its per-account limits
   * are checked and consumed with the sender's, in the same call; the budgets are charged once.
   */
  delegatedOwner?: string;
  mode: SponsorshipMode;
  /** Signed-data methods consume; stub data only reads. */
  consume: boolean;
  /** The gas the operation may use at most (paymaster limits as they will be signed); needed only to consume. */
  gas?: Parameters<typeof maxGasCostWei>[0];
  /** The paymaster data's validUntil: dollar holds count until then. Needed only to consume. */
  holdUntil?: Date;
  /** The merchant's own limits when the caller already read them (null: none set); read here otherwise. */
  merchantLimits?: Parameters<typeof merchantLimits>[0] | null;
  /**
   * The client's policies whose static rules pass, in order (selectSponsorshipPolicy.ts): the first whose
   * budgets have room sponsors. None: the limits alone.
   */
  policies?: readonly BudgetedPolicy[];
  /** The chain's latest block time, which budget periods start by; needed when a policy has budgets. */
  chainTime?: Date;
}

/**
 * What a signed operation takes, all or nothing, when it is recorded: one attempt per candidate policy,
 * tried in order until one is taken (paymaster/rpc/signAndRecord.ts), and the holds' terms (the same
 * hold id for every attempt: a refused attempt holds nothing).
 */
export interface PendingConsumption {
  attempts: ConsumptionAttempt[];
  hold: HoldTerms;
}

/**
 * One candidate's consumption: the client's limits, then the policy's budgets from `budgetsFrom` on, in
 * lock order. A refusal at a limit answers at once; at a budget, the next candidate is tried. `denial`
 * names the denial of the consumption that refused (0-based).
 */
export interface ConsumptionAttempt {
  /** The policy that sponsors when this attempt is taken; undefined when no policy was given. */
  policyId: string | undefined;
  consumptions: CounterConsumption[];
  budgetsFrom: number;
  denial(index: number): PaymasterDenial;
}

export type SponsorshipLimitOutcome =
  | {
      ok: true;
      snapshot?: UsdSnapshot;
      /** Stub data: the first candidate policy whose budgets are not used up (none given: undefined). */
      policyId?: string;
      /** The operation's holds (recorded on its usage row, settled on receipt); none when nothing is held. */
      holdId?: string;
      /**
       * Signed data only: what to consume with the usage row (nothing is consumed yet). Absent for
       * stub data, and where every operation is admitted (the benchmarks' no-limits baseline).
       */
      consumption?: PendingConsumption;
    }
  | { ok: false; denial: PaymasterDenial; snapshot?: UsdSnapshot };

/** What a dry run reads (pm_validateSponsorshipPolicies): the client's limits, and each policy's budgets. */
export interface SponsorshipRoom {
  /** The first of the client's limits that is used up (then no policy sponsors), or undefined. */
  limit?: PaymasterDenial;
  /** Per policy of the request, in its order: the first of its budgets that is used up, or undefined. */
  budgets: (PaymasterDenial | undefined)[];
}

export interface SponsorshipLimits {
  check(request: SponsorshipLimitRequest): Promise<SponsorshipLimitOutcome>;
  /**
   * Reads, as stub data does (used plus live holds, by the chain's time), whether the limits and each
   * given policy's budgets have room; consumes and holds nothing. Every policy is read, not only the first.
   */
  room(request: Omit<SponsorshipLimitRequest, 'consume' | 'gas' | 'holdUntil'>): Promise<SponsorshipRoom>;
}

/**
 * Sponsorship limits for the paymaster RPC. `check` evaluates paymaster/limits/limitRules.ts in check order:
 * stub data reads the counted rules; signed data prices the operation, checks the per-transaction cap,
 * and hands back what to consume (reservation first) with the usage row.
 */
export function createSponsorshipLimits({
  db,
  config,
  prices,
  now,
}: {
  db: Db;
  config: Config;
  prices: EthUsdPrices;
  now: () => Date;
}): SponsorshipLimits {
  const platform = platformLimits(config);
  const budgetMicro = {
    mainnet: usdToMicro(config.PAYMASTER_PLATFORM_DAILY_BUDGET_USD),
    testnet: usdToMicro(config.PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD),
  };
  // Our clock releases the hold only a grace after validUntil: until then the receipt tracker
  // settles or drops it by the chain's time (security review II, finding 9).
  const holdExpiry = (validUntil: Date) =>
    new Date(validUntil.getTime() + config.PAYMASTER_HOLD_RELEASE_GRACE_SEC * 1000);

  /** The terms every rule reads: the merchant's limits (read here unless the caller did), the windows. */
  const termsOf = async (request: SponsorshipLimitRequest, at: Date): Promise<LimitTerms> => {
    const merchant = merchantLimits(
      request.merchantLimits !== undefined
        ? (request.merchantLimits ?? undefined)
        : await findMerchantLimits(db, request.merchantId),
    );
    const networkClass = networkByChainId(request.chainId)?.testnet === false ? 'mainnet' : 'testnet';
    return {
      merchantId: request.merchantId,
      clientId: request.clientId,
      networkClass,
      sponsored: request.mode === 'sponsored',
      hour: startOfUtcHour(at),
      day: startOfUtcDay(at),
      platform,
      merchant,
      effective: effectiveLimits(platform, merchant),
      classBudgetMicro: budgetMicro[networkClass],
      merchantBudgetShareBps: config.PAYMASTER_MERCHANT_BUDGET_SHARE_BPS,
    };
  };

  return {
    async room(request) {
      const at = now();
      const reading: SponsorshipLimitRequest = { ...request, consume: false };
      const terms = await termsOf(reading, at);
      const room = await readRoom(db, countedRules(terms, reading), budgetCandidates(reading, terms), at);
      return {
        ...(room.limit && { limit: room.limit.denial() }),
        budgets: (request.policies ?? []).length === 0 ? [] : room.budgets.map((budget) => budget?.denial()),
      };
    },

    async check(request) {
      const at = now();
      const terms = await termsOf(request, at);
      const counted = countedRules(terms, request);
      const candidates = budgetCandidates(request, terms);

      if (!request.consume) {
        // Stub data reads the counters (the limits', then every candidate's budgets', in one round
        // trip): a window already used up denies estimation too.
        const room = await readRoom(db, counted, candidates, at);
        if (room.limit) return { ok: false, denial: room.limit.denial() };
        const withRoom = room.budgets.findIndex((budget) => budget === undefined);
        if (withRoom >= 0) return { ok: true, policyId: candidates[withRoom]!.policyId };
        return { ok: false, denial: room.budgets[0]!.denial() };
      }

      // A dollar rule always applies to a sponsored operation (the platform budget): price it, then
      // its per-transaction cap. A user-paid one only counts as an operation.
      let priced: { price: OperationPrice; snapshot?: UsdSnapshot } = { price: UNPRICED };
      if (terms.sponsored) {
        const pricing = await priceOperation(prices, config.PAYMASTER_MARKUP_BPS, request, terms);
        if (!pricing.ok) return pricing;
        priced = pricing;
        const overCap = merchantPerTransactionCap(terms, pricing.price);
        if (overCap) return { ok: false, snapshot: pricing.snapshot, denial: overCap };
      }
      const steps = [...prepaidReservationRule(terms, priced.price), ...counted];
      return {
        ok: true,
        ...(priced.snapshot && { snapshot: priced.snapshot }),
        ...pendingConsumption(steps, candidates, priced.price, {
          holdId: randomUUID(),
          expiresAt: holdExpiry(request.holdUntil ?? at),
          now: at,
          merchantId: request.merchantId,
        }),
      };
    },
  };
}

/**
 * Used plus live holds of the limits' and every candidate's budgets' counters, in one round trip: the
 * first used-up limit, and per candidate its first used-up budget (undefined: it has room).
 */
async function readRoom(
  db: Db,
  counted: CountedRule[],
  candidates: BudgetCandidate[],
  at: Date,
): Promise<{ limit?: CountedRule; budgets: (CountedRule | undefined)[] }> {
  const usage = await limitCountersUsage(
    db,
    [...counted, ...candidates.flatMap((candidate) => candidate.budgets)].map((rule) => rule.counter),
    at,
  );
  const usedUp = (rules: CountedRule[], from: number) =>
    rules.find((rule, index) => usage[from + index]! >= rule.limit!);
  let from = counted.length;
  const budgets = candidates.map((candidate) => {
    const budget = usedUp(candidate.budgets, from);
    from += candidate.budgets.length;
    return budget;
  });
  const limit = usedUp(counted, 0);
  return { ...(limit && { limit }), budgets };
}

/** A candidate policy and its budgets as counted rules for this operation. */
interface BudgetCandidate {
  policyId: string | undefined;
  budgets: CountedRule[];
}

/**
 * The candidates in order with their budget rules (the operation's sender, the chain's time); one
 * without policies when none were given, so the limits alone are one attempt.
 */
function budgetCandidates(request: SponsorshipLimitRequest, terms: LimitTerms): BudgetCandidate[] {
  const policies = request.policies ?? [];
  if (policies.length === 0) return [{ policyId: undefined, budgets: [] }];
  return policies.map((policy) => {
    if (policy.budgets.length === 0) return { policyId: policy.id, budgets: [] };
    if (!request.chainTime) throw new Error(`policy ${policy.id} has budgets but no chain time was read`);
    return {
      policyId: policy.id,
      budgets: policyBudgetRules(policy, {
        sender: request.sender,
        sponsored: terms.sponsored,
        chainTime: request.chainTime,
      }),
    };
  });
}

/** A user-paid operation's dollar amounts: nothing (only its operation counts). */
const UNPRICED: OperationPrice = { costMicro: 0n, chargedMicro: 0n, chargedUsd: '0' };

/** The operation's maximum cost at a fresh price, or the denial when there is none. */
async function priceOperation(
  prices: EthUsdPrices,
  markupBps: number,
  request: SponsorshipLimitRequest,
  terms: LimitTerms,
): Promise<
  { ok: true; price: OperationPrice; snapshot: UsdSnapshot } | { ok: false; denial: PaymasterDenial }
> {
  const price = request.gas ? await prices.fresh(request.chainId) : undefined;
  if (!price || !request.gas) {
    return {
      ok: false,
      denial:
        terms.merchant.perTxUsd !== null
          ? denial(
              'paymaster_merchant_tx_cap_unpriceable',
              `no fresh ETH/USD price on chain ${request.chainId} to check the merchant per-transaction cap; retry`,
            )
          : denial(
              'paymaster_price_unavailable',
              `no fresh ETH/USD price on chain ${request.chainId}; retry`,
            ),
    };
  }
  const costWei = maxGasCostWei(request.gas);
  const costMicro = weiToMicroUsd(costWei, price.answer);
  const chargedMicro = withMarkup(costMicro, markupBps);
  const chargedUsd = microToUsd(chargedMicro);
  return {
    ok: true,
    price: { costMicro, chargedMicro, chargedUsd },
    snapshot: {
      ethUsdPrice: feedAnswerToDecimal(price.answer),
      estimatedGasCostWei: costWei.toString(),
      estimatedCostUsd: chargedUsd,
    },
  };
}

/**
 * What a signed operation takes, in consumption (and lock) order, by the caller with its usage row
 * in one round trip once it is signed (db/paymasterUsage.ts recordSignedOperation): all or nothing,
 * under the counters' row locks.
 */
function pendingConsumption(
  steps: CountedRule[],
  candidates: BudgetCandidate[],
  price: OperationPrice,
  hold: HoldTerms,
): { holdId?: string; consumption: PendingConsumption } {
  const amountOf = (basis: ConsumptionBasis): bigint =>
    basis === 'ops' ? 1n : basis === 'cost' ? price.costMicro : price.chargedMicro;
  const holds = [...steps, ...candidates.flatMap((candidate) => candidate.budgets)].some(
    (step) => step.basis !== 'ops',
  );
  return {
    ...(holds && { holdId: hold.holdId }),
    consumption: {
      attempts: candidates.map(({ policyId, budgets }) => {
        const attempt = [...steps, ...budgets];
        return {
          policyId,
          consumptions: attempt.map((step) => ({
            counter: step.counter,
            amount: amountOf(step.basis),
            limit: step.limit!,
            basis: step.basis,
          })),
          budgetsFrom: steps.length,
          denial: (index: number) => attempt[index]!.denial(),
        };
      }),
      hold,
    },
  };
}
