import type { Config } from '../../config';
import type { Db } from '../../db/client';
import { findMerchantLimits, type MerchantLimitColumns } from '../../db/paymasterLimits';
import { microToUsd, usdToMicro } from '../../money/microUsd';

/*
 * The views of the sponsorship limits (SPEC "Sponsorship limits"): the platform's, the merchant's own
 * and the effective ones, as GET /v1/paymaster/limits answers them and PATCH checks a change against
 * them. Their enforcement is paymaster/limits/limits.ts.
 */

/**
 * One view of the limits: operations per UTC hour, decimal USD strings, basis points, gas; null = none.
 * The first five a merchant may tighten; the last five are the platform's own (null in the merchant view).
 */
export interface LimitsView {
  perSenderHourlyOps: number | null;
  perSenderDailyUsd: string | null;
  perTxUsd: string | null;
  /** Sponsored USD per merchant per UTC day, on each network class (mainnets, testnets). */
  perMerchantDailyUsd: string | null;
  /** Sponsored USD per paymaster client per UTC day (merchant-set; the platform has none). */
  perClientDailyUsd: string | null;
  /** Platform-wide sponsored gas cost per UTC day on mainnets (without markup). */
  dailyBudgetUsd: string | null;
  /** The same on testnets. */
  testnetDailyBudgetUsd: string | null;
  /** The share of each daily budget one merchant may hold or spend. */
  merchantBudgetShareBps: number | null;
  /** maxFeePerGas at most this share of the chain's 2 × base fee + priority fee (and the tip of its base + priority). */
  feeBoundBps: number | null;
  /** Most gas (every limit plus preVerificationGas) one signed operation may carry. */
  maxOperationGas: number | null;
}

/** The limits a merchant may set (tighten) with PATCH. */
export const LIMIT_KEYS = [
  'perSenderHourlyOps',
  'perSenderDailyUsd',
  'perTxUsd',
  'perMerchantDailyUsd',
  'perClientDailyUsd',
] as const;
export type LimitKey = (typeof LIMIT_KEYS)[number];
const USD_LIMIT_KEYS = ['perSenderDailyUsd', 'perTxUsd', 'perMerchantDailyUsd', 'perClientDailyUsd'] as const;

export interface LimitsViews {
  platform: LimitsView;
  merchant: LimitsView;
  effective: LimitsView;
}

/** The shortest decimal form of a USD amount ("5.000000" → "5"), so every view reads the same way. */
const normalizedUsd = (usd: string | null): string | null =>
  usd === null ? null : microToUsd(usdToMicro(usd));

/** The platform's limits from configuration. There is no platform per-transaction or per-client cap. */
export function platformLimits(config: Config): LimitsView {
  return {
    perSenderHourlyOps: config.PAYMASTER_PLATFORM_PER_SENDER_HOURLY_OPS,
    perSenderDailyUsd: normalizedUsd(config.PAYMASTER_PLATFORM_PER_SENDER_DAILY_USD),
    perTxUsd: null,
    perMerchantDailyUsd: normalizedUsd(config.PAYMASTER_PLATFORM_PER_MERCHANT_DAILY_USD),
    perClientDailyUsd: null,
    dailyBudgetUsd: normalizedUsd(config.PAYMASTER_PLATFORM_DAILY_BUDGET_USD),
    testnetDailyBudgetUsd: normalizedUsd(config.PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD),
    merchantBudgetShareBps: config.PAYMASTER_MERCHANT_BUDGET_SHARE_BPS,
    feeBoundBps: config.PAYMASTER_FEE_BOUND_BPS,
    maxOperationGas: config.PAYMASTER_MAX_OPERATION_GAS,
  };
}

export function merchantLimits(row: MerchantLimitColumns | undefined): LimitsView {
  return {
    perSenderHourlyOps: row?.per_sender_hourly_ops ?? null,
    perSenderDailyUsd: normalizedUsd(row?.per_sender_daily_usd ?? null),
    perTxUsd: normalizedUsd(row?.per_tx_usd ?? null),
    perMerchantDailyUsd: normalizedUsd(row?.per_merchant_daily_usd ?? null),
    perClientDailyUsd: normalizedUsd(row?.per_client_daily_usd ?? null),
    dailyBudgetUsd: null,
    testnetDailyBudgetUsd: null,
    merchantBudgetShareBps: null,
    feeBoundBps: null,
    maxOperationGas: null,
  };
}

const lowerOps = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);
const lowerUsd = (a: string | null, b: string | null): string | null =>
  a === null ? b : b === null ? a : usdToMicro(a) <= usdToMicro(b) ? a : b;

/** Each limit a merchant may set is the lower of the platform's and the merchant's (null counts as no limit). */
export function effectiveLimits(platform: LimitsView, merchant: LimitsView): LimitsView {
  return {
    ...platform,
    perSenderHourlyOps: lowerOps(platform.perSenderHourlyOps, merchant.perSenderHourlyOps),
    perSenderDailyUsd: lowerUsd(platform.perSenderDailyUsd, merchant.perSenderDailyUsd),
    perTxUsd: lowerUsd(platform.perTxUsd, merchant.perTxUsd),
    perMerchantDailyUsd: lowerUsd(platform.perMerchantDailyUsd, merchant.perMerchantDailyUsd),
    perClientDailyUsd: lowerUsd(platform.perClientDailyUsd, merchant.perClientDailyUsd),
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
  for (const key of USD_LIMIT_KEYS) {
    const value = requested[key];
    const limit = platform[key];
    if (value != null && limit !== null && usdToMicro(value) > usdToMicro(limit)) looser.push(key);
  }
  return looser;
}
