import type { Config } from '../config';
import type { Db } from '../db/client';
import { randomUUID } from 'node:crypto';
import { networkByChainId } from '../chain/networks';
import { effectiveLimits, merchantLimits, platformLimits, type LimitKey } from './limitViews';
import {
  type ConsumptionBasis,
  type CounterConsumption,
  findMerchantLimits,
  type HoldTerms,
  limitCountersUsage,
  type LimitCounter,
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
 * Sponsorship limits (SPEC "Sponsorship limits", DESIGN §4.3), enforced in DESIGN's order (their views,
 * GET and PATCH, are paymaster/limitViews.ts) — prepaid balance reservation (mainnets) → merchant per-transaction cap
 * (priced) → platform daily budget of the network class → the merchant's share of it → the merchant's
 * daily cap → the client's daily cap → per-sender daily USD cap → per-sender hourly operation limit.
 * Signed-data methods consume: operations at once, dollars as holds on the operation's maximum cost
 * that last until its validUntil and are settled at the actual cost on receipt (db/gasCharges.ts).
 * Stub data only reads. One call of `consume_paymaster_limits` takes everything or nothing.
 */

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
 * its holds' terms; `refusal` names the denial of the consumption that refused (0-based).
 */
export interface PendingConsumption {
  consumptions: CounterConsumption[];
  hold: HoldTerms;
  refusal(index: number): PaymasterDenial;
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

/** The window of counters that never reset (the prepaid balance reservation). */
const NO_WINDOW = new Date(0);

const sharePercent = (bps: number): string => `${bps / 100}%`;

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
  const shareBps = config.PAYMASTER_MERCHANT_BUDGET_SHARE_BPS;
  const holdExpiry = (validUntil: Date) =>
    new Date(validUntil.getTime() + config.PAYMASTER_HOLD_RELEASE_GRACE_SEC * 1000);

  return {
    async check(request) {
      const merchant = merchantLimits(
        request.merchantLimits !== undefined
          ? (request.merchantLimits ?? undefined)
          : await findMerchantLimits(db, request.merchantId),
      );
      const effective = effectiveLimits(platform, merchant);
      const at = now();
      const hour = startOfUtcHour(at);
      const day = startOfUtcDay(at);
      const networkClass = networkByChainId(request.chainId)?.testnet === false ? 'mainnet' : 'testnet';
      const { merchantId, clientId, sender } = request;
      const merchantBinds = (key: LimitKey): string =>
        merchant[key] !== null && effective[key] === merchant[key] && merchant[key] !== platform[key]
          ? MERCHANT_CAP_SUFFIX
          : '';
      // Dollar rules are about sponsored gas; a user-paid operation only counts as an operation.
      const sponsored = request.mode === 'sponsored';
      const usdLimit = (usd: string | null): bigint | null =>
        sponsored && usd !== null ? usdToMicro(usd) : null;
      const classBudget = budgetMicro[networkClass];

      interface Rule {
        counter: LimitCounter;
        basis: ConsumptionBasis;
        /** Null: the rule does not apply to this request. */
        limit: bigint | null;
        refusal: () => PaymasterDenial;
      }
      const budgetRule = (detail: string) => () =>
        denial(
          'paymaster_global_cap_exceeded',
          `${detail}; it resets at 00:00 UTC, and what unsent operations hold frees up at their validUntil`,
        );
      // Per-account limits: the sender's, and a delegated transfer's owner's under the same keys (one
      // account's allowance whether it sends itself or its delegate does).
      const accountRules = (account: string, role: string): Rule[] => [
        {
          counter: { key: `sender_usd:${merchantId}:${account}`, windowStart: day },
          basis: 'charged',
          limit: usdLimit(effective.perSenderDailyUsd),
          refusal: () =>
            denial(
              'paymaster_spend_cap_exceeded',
              `${role} ${account} reached its daily sponsorship cap of ${effective.perSenderDailyUsd} USD${merchantBinds('perSenderDailyUsd')}`,
            ),
        },
        {
          counter: { key: `sender_ops:${merchantId}:${account}`, windowStart: hour },
          basis: 'ops',
          limit: effective.perSenderHourlyOps === null ? null : BigInt(effective.perSenderHourlyOps),
          refusal: () =>
            denial(
              'paymaster_rate_limit_exceeded',
              `${role} ${account} reached its limit of ${effective.perSenderHourlyOps} operations per hour${merchantBinds('perSenderHourlyOps')}`,
            ),
        },
      ];
      const accounts = [
        { account: sender, role: 'sender' },
        ...(request.delegatedOwner && request.delegatedOwner !== sender
          ? [{ account: request.delegatedOwner, role: 'delegated owner' }]
          : []),
      ].sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : 0));
      // In consumption (and lock) order; the reservation comes first and is only taken when signing.
      const rules: Rule[] = [
        {
          counter: { key: `platform_budget_usd:${networkClass}`, windowStart: day },
          basis: 'cost',
          limit: sponsored ? classBudget : null,
          refusal: budgetRule(`the platform daily sponsorship budget for ${networkClass}s is reached`),
        },
        {
          counter: { key: `merchant_budget_usd:${networkClass}:${merchantId}`, windowStart: day },
          basis: 'cost',
          limit: sponsored ? (classBudget * BigInt(shareBps)) / 10_000n : null,
          refusal: budgetRule(
            `this merchant's share (${sharePercent(shareBps)}) of the platform daily sponsorship budget for ${networkClass}s is reached`,
          ),
        },
        {
          counter: { key: `merchant_usd:${networkClass}:${merchantId}`, windowStart: day },
          basis: 'charged',
          limit: usdLimit(effective.perMerchantDailyUsd),
          refusal: () =>
            denial(
              'paymaster_spend_cap_exceeded',
              `the merchant reached its daily sponsorship cap of ${effective.perMerchantDailyUsd} USD on ${networkClass}s${merchantBinds('perMerchantDailyUsd')}`,
            ),
        },
        {
          counter: { key: `client_usd:${clientId}`, windowStart: day },
          basis: 'charged',
          limit: usdLimit(effective.perClientDailyUsd),
          refusal: () =>
            denial(
              'paymaster_spend_cap_exceeded',
              `client ${clientId} reached its daily sponsorship cap of ${effective.perClientDailyUsd} USD${MERCHANT_CAP_SUFFIX}`,
            ),
        },
        // Counters are locked in this order: the accounts in address order, so two delegated requests
        // with sender and owner swapped never wait on each other in a cycle.
        ...accounts.flatMap(({ account, role }) => accountRules(account, role)),
      ];
      const applicable = rules.filter((rule) => rule.limit !== null);

      if (!request.consume) {
        // Stub data reads the counters: a window already used up refuses estimation too.
        const usage = await limitCountersUsage(
          db,
          applicable.map((rule) => rule.counter),
          at,
        );
        const usedUp = applicable.find((rule, index) => usage[index]! >= rule.limit!);
        if (usedUp) return { ok: false, denial: usedUp.refusal() };
        return { ok: true };
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

      // Sponsored operations on mainnets reserve their maximum charge against the prepaid balance.
      const steps: Rule[] = [
        ...(sponsored && networkClass === 'mainnet'
          ? [
              {
                counter: { key: `prepaid_reserved:${merchantId}`, windowStart: NO_WINDOW },
                basis: 'reservation' as const,
                limit: 0n,
                refusal: () =>
                  denial(
                    'paymaster_billing_balance_exhausted',
                    `the prepaid balance not reserved by signed operations does not cover this operation's maximum cost of ${snapshot!.estimatedCostUsd} USD (markup included); top it up, or retry once signed operations are included or expire`,
                  ),
              },
            ]
          : []),
        ...applicable,
      ];
      const amountOf = (basis: ConsumptionBasis): bigint =>
        basis === 'ops' ? 1n : basis === 'cost' ? costMicro : chargedMicro;
      const holdId = randomUUID();
      const holds = steps.some((step) => step.basis !== 'ops');
      // Taken by the caller with the operation's usage row, in one round trip, once it is signed
      // (db/paymasterUsage.ts recordSignedOperation): all or nothing, under the counters' row locks.
      return {
        ok: true,
        ...(snapshot && { snapshot }),
        ...(holds && { holdId }),
        consumption: {
          consumptions: steps.map((step) => ({
            counter: step.counter,
            amount: amountOf(step.basis),
            limit: step.limit!,
            basis: step.basis,
          })),
          // Our clock releases the hold only a grace after validUntil: until then the receipt tracker
          // settles or drops it by the chain's time (security review II, finding 9).
          hold: { holdId, expiresAt: holdExpiry(request.holdUntil ?? at), now: at, merchantId },
          refusal: (index) => steps[index]!.refusal(),
        },
      };
    },
  };
}
