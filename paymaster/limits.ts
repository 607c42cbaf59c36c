import type { Config } from '../config';
import type { Db } from '../db/client';
import {
  consumeLimitCounters,
  findMerchantLimits,
  limitCounterUsage,
  releaseLimitCounter,
  type LimitCounter,
  type MerchantLimitsRow,
} from '../db/paymasterLimits';
import type { SponsorshipMode } from '../db/schema';
import { denial, type PaymasterDenial } from './denials';
import type { EthUsdPrices } from './prices';
import {
  feedAnswerToDecimal,
  maxGasCostWei,
  microToUsd,
  usdToMicro,
  weiToMicroUsd,
  withMarkup,
} from './pricesConversion';

/**
 * Sponsorship limits (SPEC "Sponsorship limits", DESIGN §4.3): three views of the per-sender limits
 * and the merchant per-transaction cap, and their enforcement in DESIGN's order — merchant
 * per-transaction cap (priced) → platform daily budget → per-sender daily USD cap → per-sender hourly
 * operation limit. Signed-data methods consume; stub data only reads. Each counter is consumed with
 * one conditional upsert; a later refusal (or a signer failure) gives back what was consumed.
 */

/** One view of the limits: operations per UTC hour, decimal USD strings; null = none. */
export interface LimitsView {
  perSenderHourlyOps: number | null;
  perSenderDailyUsd: string | null;
  perTxUsd: string | null;
}

export const LIMIT_KEYS = ['perSenderHourlyOps', 'perSenderDailyUsd', 'perTxUsd'] as const;
export type LimitKey = (typeof LIMIT_KEYS)[number];

export interface LimitsViews {
  platform: LimitsView;
  merchant: LimitsView;
  effective: LimitsView;
}

/** The shortest decimal form of a USD amount ("5.000000" → "5"), so every view reads the same way. */
const normalizedUsd = (usd: string | null): string | null =>
  usd === null ? null : microToUsd(usdToMicro(usd));

/** The platform's limits from configuration. There is no platform per-transaction cap (merchant-set only). */
export function platformLimits(config: Config): LimitsView {
  return {
    perSenderHourlyOps: config.PAYMASTER_PLATFORM_PER_SENDER_HOURLY_OPS,
    perSenderDailyUsd: normalizedUsd(config.PAYMASTER_PLATFORM_PER_SENDER_DAILY_USD),
    perTxUsd: null,
  };
}

export function merchantLimits(row: MerchantLimitsRow | undefined): LimitsView {
  return {
    perSenderHourlyOps: row?.per_sender_hourly_ops ?? null,
    perSenderDailyUsd: normalizedUsd(row?.per_sender_daily_usd ?? null),
    perTxUsd: normalizedUsd(row?.per_tx_usd ?? null),
  };
}

const lowerOps = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);
const lowerUsd = (a: string | null, b: string | null): string | null =>
  a === null ? b : b === null ? a : usdToMicro(a) <= usdToMicro(b) ? a : b;

/** Each limit is the lower of the platform's and the merchant's (null counts as no limit). */
export function effectiveLimits(platform: LimitsView, merchant: LimitsView): LimitsView {
  return {
    perSenderHourlyOps: lowerOps(platform.perSenderHourlyOps, merchant.perSenderHourlyOps),
    perSenderDailyUsd: lowerUsd(platform.perSenderDailyUsd, merchant.perSenderDailyUsd),
    perTxUsd: lowerUsd(platform.perTxUsd, merchant.perTxUsd),
  };
}

export async function limitsViews(db: Db, config: Config, merchantId: string): Promise<LimitsViews> {
  const platform = platformLimits(config);
  const merchant = merchantLimits(await findMerchantLimits(db, merchantId));
  return { platform, merchant, effective: effectiveLimits(platform, merchant) };
}

/**
 * The keys of `requested` whose value would loosen the platform's limit (a higher number, or null
 * where the platform has none is fine: null clears). The merchant may only tighten.
 */
export function looserThanPlatform(platform: LimitsView, requested: Partial<LimitsView>): LimitKey[] {
  const looser: LimitKey[] = [];
  const ops = requested.perSenderHourlyOps;
  if (ops != null && platform.perSenderHourlyOps !== null && ops > platform.perSenderHourlyOps)
    looser.push('perSenderHourlyOps');
  for (const key of ['perSenderDailyUsd', 'perTxUsd'] as const) {
    const value = requested[key];
    const limit = platform[key];
    if (value != null && limit !== null && usdToMicro(value) > usdToMicro(limit)) looser.push(key);
  }
  return looser;
}

/** The merchant's value binds when it is set and stricter than the platform's (SPEC's message suffix). */
const MERCHANT_CAP_SUFFIX = ' (merchant-configured cap)';

const startOfUtcHour = (now: Date): Date => {
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
  chainId: number;
  /** Lower-case address. */
  sender: string;
  mode: SponsorshipMode;
  /** Signed-data methods consume; stub data only reads. */
  consume: boolean;
  /** The gas the operation may use at most (paymaster limits as they will be signed); needed only to consume. */
  gas?: Parameters<typeof maxGasCostWei>[0];
}

export type SponsorshipLimitOutcome =
  | { ok: true; snapshot?: UsdSnapshot; release: () => Promise<void> }
  | { ok: false; denial: PaymasterDenial; snapshot?: UsdSnapshot };

export interface SponsorshipLimits {
  check(request: SponsorshipLimitRequest): Promise<SponsorshipLimitOutcome>;
}

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
  const dailyBudgetMicro = usdToMicro(config.PAYMASTER_PLATFORM_DAILY_BUDGET_USD);

  return {
    async check(request) {
      const merchant = merchantLimits(await findMerchantLimits(db, request.merchantId));
      const effective = effectiveLimits(platform, merchant);
      const at = now();
      const hour = startOfUtcHour(at);
      const day = startOfUtcDay(at);
      const counters = {
        budget: { key: 'platform_budget_usd', windowStart: day },
        senderUsd: { key: `sender_usd:${request.merchantId}:${request.sender}`, windowStart: day },
        senderOps: { key: `sender_ops:${request.merchantId}:${request.sender}`, windowStart: hour },
      } satisfies Record<string, LimitCounter>;
      const merchantBinds = (key: LimitKey): string =>
        merchant[key] !== null && effective[key] === merchant[key] && merchant[key] !== platform[key]
          ? MERCHANT_CAP_SUFFIX
          : '';
      // Dollar rules are about sponsored gas; a user-paid operation only counts as an operation.
      const sponsored = request.mode === 'sponsored';
      const dailyUsdMicro =
        sponsored && effective.perSenderDailyUsd !== null ? usdToMicro(effective.perSenderDailyUsd) : null;
      const opsLimit = effective.perSenderHourlyOps;

      const globalCapDenial = () =>
        denial(
          'paymaster_global_cap_exceeded',
          'the platform daily sponsorship budget is reached; it resets at 00:00 UTC',
        );
      const spendCapDenial = () =>
        denial(
          'paymaster_spend_cap_exceeded',
          `sender ${request.sender} reached its daily sponsorship cap of ${effective.perSenderDailyUsd} USD${merchantBinds('perSenderDailyUsd')}`,
        );
      const rateLimitDenial = () =>
        denial(
          'paymaster_rate_limit_exceeded',
          `sender ${request.sender} reached its limit of ${opsLimit} operations per hour${merchantBinds('perSenderHourlyOps')}`,
        );

      if (!request.consume) {
        // Stub data reads the counters: a window already used up refuses estimation too.
        if (sponsored && (await limitCounterUsage(db, counters.budget)) >= dailyBudgetMicro)
          return { ok: false, denial: globalCapDenial() };
        if (dailyUsdMicro !== null && (await limitCounterUsage(db, counters.senderUsd)) >= dailyUsdMicro)
          return { ok: false, denial: spendCapDenial() };
        if (opsLimit !== null && (await limitCounterUsage(db, counters.senderOps)) >= BigInt(opsLimit))
          return { ok: false, denial: rateLimitDenial() };
        return { ok: true, release: async () => {} };
      }

      // Price the operation when a dollar rule applies (always for sponsored: the platform budget).
      let snapshot: UsdSnapshot | undefined;
      let costMicro = 0n;
      let chargedMicro = 0n;
      if (sponsored) {
        const price = request.gas ? await prices.fresh(request.chainId) : undefined;
        if (!price || !request.gas) {
          return {
            ok: false,
            denial:
              merchant.perTxUsd !== null
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
        costMicro = weiToMicroUsd(costWei, price.answer);
        chargedMicro = withMarkup(costMicro, config.PAYMASTER_MARKUP_BPS);
        snapshot = {
          ethUsdPrice: feedAnswerToDecimal(price.answer),
          estimatedGasCostWei: costWei.toString(),
          estimatedCostUsd: microToUsd(chargedMicro),
        };
        if (merchant.perTxUsd !== null && chargedMicro > usdToMicro(merchant.perTxUsd)) {
          return {
            ok: false,
            snapshot,
            denial: denial(
              'paymaster_merchant_tx_cap_exceeded',
              `estimated cost plus markup ${snapshot.estimatedCostUsd} USD is above the per-transaction cap of ${merchant.perTxUsd} USD`,
            ),
          };
        }
      }

      // Consume in DESIGN's order, all or nothing in one statement: a refusal rolls back what this
      // request took before any other request could see it (no spurious refusals), and every request
      // locks the counters in the same order (no deadlocks).
      const steps: {
        counter: LimitCounter;
        amount: bigint;
        limit: bigint | null;
        refusal: () => PaymasterDenial;
      }[] = [
        // The platform budget is the platform's gas exposure: cost without markup.
        {
          counter: counters.budget,
          amount: costMicro,
          limit: sponsored ? dailyBudgetMicro : null,
          refusal: globalCapDenial,
        },
        { counter: counters.senderUsd, amount: chargedMicro, limit: dailyUsdMicro, refusal: spendCapDenial },
        {
          counter: counters.senderOps,
          amount: 1n,
          limit: opsLimit === null ? null : BigInt(opsLimit),
          refusal: rateLimitDenial,
        },
      ];
      const applicable = steps.filter((step) => step.limit !== null);
      const refusedAt = await consumeLimitCounters(
        db,
        applicable.map((step) => ({ counter: step.counter, amount: step.amount, limit: step.limit! })),
      );
      const refused = refusedAt === undefined ? undefined : applicable[refusedAt]!.refusal();
      if (refused) return { ok: false, denial: refused, ...(snapshot && { snapshot }) };
      // A later failure (the signer) gives the units back.
      const release = async () => {
        for (const step of applicable.splice(0)) await releaseLimitCounter(db, step.counter, step.amount);
      };
      return { ok: true, ...(snapshot && { snapshot }), release };
    },
  };
}
