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

/**
 * Sponsorship limits (SPEC "Sponsorship limits", docs/paymaster.md "Order of checks"), enforced in that order (their views,
 * GET and PATCH, are paymaster/limits/limitViews.ts; the rules one by one paymaster/limits/limitRules.ts) — prepaid balance reservation (mainnets) → merchant per-transaction cap
 * (priced) → platform daily budget of the network class → the merchant's share of it → the merchant's
 * daily cap → the client's daily cap → per-sender daily USD cap → per-sender hourly operation limit.
 * Signed-data methods consume: operations at once, dollars as holds on the operation's maximum cost
 * that last until its validUntil and are settled at the actual cost on receipt (db/gasCharges.ts).
 * Stub data only reads. One call of `consume_paymaster_limits` takes everything or nothing.
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
}

/**
 * What a signed operation takes, all or nothing, when it is recorded: its counters in lock order and
 * its holds' terms; `denial` names the denial of the consumption that denied it (0-based).
 */
export interface PendingConsumption {
  consumptions: CounterConsumption[];
  hold: HoldTerms;
  denial(index: number): PaymasterDenial;
}

export type SponsorshipLimitOutcome =
  | {
      ok: true;
      snapshot?: UsdSnapshot;
      /** The operation's holds (recorded on its usage row, settled on receipt); none when nothing is held. */
      holdId?: string;
      /**
       * Signed data only: what to consume with the usage row (nothing is consumed yet). Absent for
       * stub data, and where every operation is admitted (the benchmarks' no-limits baseline).
       */
      consumption?: PendingConsumption;
    }
  | { ok: false; denial: PaymasterDenial; snapshot?: UsdSnapshot };

export interface SponsorshipLimits {
  check(request: SponsorshipLimitRequest): Promise<SponsorshipLimitOutcome>;
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
    async check(request) {
      const at = now();
      const terms = await termsOf(request, at);
      const counted = countedRules(terms, request);

      if (!request.consume) {
        // Stub data reads the counters: a window already used up denies estimation too.
        const usage = await limitCountersUsage(
          db,
          counted.map((rule) => rule.counter),
          at,
        );
        const usedUp = counted.find((rule, index) => usage[index]! >= rule.limit!);
        return usedUp ? { ok: false, denial: usedUp.denial() } : { ok: true };
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
        ...pendingConsumption(steps, priced.price, {
          holdId: randomUUID(),
          expiresAt: holdExpiry(request.holdUntil ?? at),
          now: at,
          merchantId: request.merchantId,
        }),
      };
    },
  };
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
  price: OperationPrice,
  hold: HoldTerms,
): { holdId?: string; consumption: PendingConsumption } {
  const amountOf = (basis: ConsumptionBasis): bigint =>
    basis === 'ops' ? 1n : basis === 'cost' ? price.costMicro : price.chargedMicro;
  const holds = steps.some((step) => step.basis !== 'ops');
  return {
    ...(holds && { holdId: hold.holdId }),
    consumption: {
      consumptions: steps.map((step) => ({
        counter: step.counter,
        amount: amountOf(step.basis),
        limit: step.limit!,
        basis: step.basis,
      })),
      hold,
      denial: (index) => steps[index]!.denial(),
    },
  };
}
