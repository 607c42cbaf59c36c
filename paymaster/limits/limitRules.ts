import {
  prepaidReservationCounter,
  type ConsumptionBasis,
  type LimitCounter,
} from '../../db/paymasterLimits';
import type { LimitKey, LimitsView } from './limitViews';
import { denial, type PaymasterDenial } from '../rpc/denials';
import { usdToMicro } from '../../money/microUsd';

/**
 * The sponsorship limits one by one, in docs/paymaster.md's check order (step 15): prepaid balance
 * reservation → merchant per-transaction cap → platform daily budget → the merchant's share of it →
 * merchant daily cap → client daily cap → per-sender daily USD cap → per-sender hourly operations.
 * Each rule says how it applies to one request (paymaster/limits/limits.ts evaluates them); a counted rule
 * names its counter, what it counts, its limit (null: it does not apply) and its denial.
 */

/** The merchant's value binds when it is set and stricter than the platform's (SPEC's message suffix). */
export const MERCHANT_CAP_SUFFIX = ' (merchant-configured cap)';

/** One counted limit as it applies to a request. */
export interface CountedRule {
  counter: LimitCounter;
  basis: ConsumptionBasis;
  /** Null: the rule does not apply to this request. */
  limit: bigint | null;
  denial: () => PaymasterDenial;
}

/** What every rule reads about one request: whose it is, its window, and the limits in force. */
export interface LimitTerms {
  merchantId: string;
  clientId: string;
  networkClass: 'mainnet' | 'testnet';
  /** Dollar rules are about sponsored gas; a user-paid operation only counts as an operation. */
  sponsored: boolean;
  hour: Date;
  day: Date;
  platform: LimitsView;
  merchant: LimitsView;
  effective: LimitsView;
  /** The platform daily budget of the request's network class, in micro-dollars. */
  classBudgetMicro: bigint;
  merchantBudgetShareBps: number;
}

/** What a priced operation costs, in micro-dollars, without and with markup (what it is charged). */
export interface OperationPrice {
  costMicro: bigint;
  chargedMicro: bigint;
  /** The charged amount as a decimal USD string (the denials quote it). */
  chargedUsd: string;
}

const merchantBinds = (terms: LimitTerms, key: LimitKey): string =>
  terms.merchant[key] !== null &&
  terms.effective[key] === terms.merchant[key] &&
  terms.merchant[key] !== terms.platform[key]
    ? MERCHANT_CAP_SUFFIX
    : '';

const usdLimit = (terms: LimitTerms, usd: string | null): bigint | null =>
  terms.sponsored && usd !== null ? usdToMicro(usd) : null;

const sharePercent = (bps: number): string => `${bps / 100}%`;

const budgetDenial = (detail: string) => () =>
  denial(
    'paymaster_global_cap_exceeded',
    `${detail}; it resets at 00:00 UTC, and what unsent operations hold frees up at their validUntil`,
  );

/** Sponsored operations on mainnets reserve their maximum charge against the prepaid balance. */
export function prepaidReservationRule(terms: LimitTerms, price: OperationPrice): CountedRule[] {
  if (!terms.sponsored || terms.networkClass !== 'mainnet') return [];
  return [
    {
      counter: prepaidReservationCounter(terms.merchantId),
      basis: 'reservation',
      limit: 0n,
      denial: () =>
        denial(
          'paymaster_billing_balance_exhausted',
          `the prepaid balance not reserved by signed operations does not cover this operation's maximum cost of ${price.chargedUsd} USD (markup included); top it up, or retry once signed operations are included or expire`,
        ),
    },
  ];
}

/** The merchant's per-transaction cap, against the priced operation's charge; undefined when within it. */
export function merchantPerTransactionCap(
  terms: LimitTerms,
  price: OperationPrice,
): PaymasterDenial | undefined {
  const cap = terms.merchant.perTxUsd;
  if (cap === null || price.chargedMicro <= usdToMicro(cap)) return undefined;
  return denial(
    'paymaster_merchant_tx_cap_exceeded',
    `estimated cost plus markup ${price.chargedUsd} USD is above the per-transaction cap of ${cap} USD`,
  );
}

export function platformDailyBudgetRule(terms: LimitTerms): CountedRule {
  return {
    counter: { key: `platform_budget_usd:${terms.networkClass}`, windowStart: terms.day },
    basis: 'cost',
    limit: terms.sponsored ? terms.classBudgetMicro : null,
    denial: budgetDenial(`the platform daily sponsorship budget for ${terms.networkClass}s is reached`),
  };
}

export function merchantBudgetShareRule(terms: LimitTerms): CountedRule {
  const shareBps = terms.merchantBudgetShareBps;
  return {
    counter: { key: `merchant_budget_usd:${terms.networkClass}:${terms.merchantId}`, windowStart: terms.day },
    basis: 'cost',
    limit: terms.sponsored ? (terms.classBudgetMicro * BigInt(shareBps)) / 10_000n : null,
    denial: budgetDenial(
      `this merchant's share (${sharePercent(shareBps)}) of the platform daily sponsorship budget for ${terms.networkClass}s is reached`,
    ),
  };
}

export function merchantDailyCapRule(terms: LimitTerms): CountedRule {
  const cap = terms.effective.perMerchantDailyUsd;
  return {
    counter: { key: `merchant_usd:${terms.networkClass}:${terms.merchantId}`, windowStart: terms.day },
    basis: 'charged',
    limit: usdLimit(terms, cap),
    denial: () =>
      denial(
        'paymaster_spend_cap_exceeded',
        `the merchant reached its daily sponsorship cap of ${cap} USD on ${terms.networkClass}s${merchantBinds(terms, 'perMerchantDailyUsd')}`,
      ),
  };
}

export function clientDailyCapRule(terms: LimitTerms): CountedRule {
  const cap = terms.effective.perClientDailyUsd;
  return {
    counter: { key: `client_usd:${terms.clientId}`, windowStart: terms.day },
    basis: 'charged',
    limit: usdLimit(terms, cap),
    denial: () =>
      denial(
        'paymaster_spend_cap_exceeded',
        `client ${terms.clientId} reached its daily sponsorship cap of ${cap} USD${MERCHANT_CAP_SUFFIX}`,
      ),
  };
}

/**
 * Per-account limits are the sender's, and a delegated transfer's owner's under the same keys (one
 * account's allowance whether it sends itself or its delegate does); `role` names it in the denial.
 */
export function senderDailyUsdRule(terms: LimitTerms, account: string, role: string): CountedRule {
  const cap = terms.effective.perSenderDailyUsd;
  return {
    counter: { key: `sender_usd:${terms.merchantId}:${account}`, windowStart: terms.day },
    basis: 'charged',
    limit: usdLimit(terms, cap),
    denial: () =>
      denial(
        'paymaster_spend_cap_exceeded',
        `${role} ${account} reached its daily sponsorship cap of ${cap} USD${merchantBinds(terms, 'perSenderDailyUsd')}`,
      ),
  };
}

export function senderHourlyOpsRule(terms: LimitTerms, account: string, role: string): CountedRule {
  const ops = terms.effective.perSenderHourlyOps;
  return {
    counter: { key: `sender_ops:${terms.merchantId}:${account}`, windowStart: terms.hour },
    basis: 'ops',
    limit: ops === null ? null : BigInt(ops),
    denial: () =>
      denial(
        'paymaster_rate_limit_exceeded',
        `${role} ${account} reached its limit of ${ops} operations per hour${merchantBinds(terms, 'perSenderHourlyOps')}`,
      ),
  };
}

/**
 * The counted rules after the per-transaction cap, in check order, which is also the counters' lock
 * order: the per-account rules take the accounts in address order, so two delegated requests with
 * sender and owner swapped never wait on each other in a cycle. Only the rules that apply.
 */
export function countedRules(
  terms: LimitTerms,
  accounts: { sender: string; delegatedOwner?: string },
): CountedRule[] {
  const { sender, delegatedOwner } = accounts;
  const perAccount = [
    { account: sender, role: 'sender' },
    ...(delegatedOwner && delegatedOwner !== sender
      ? [{ account: delegatedOwner, role: 'delegated owner' }]
      : []),
  ].sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : 0));
  return [
    platformDailyBudgetRule(terms),
    merchantBudgetShareRule(terms),
    merchantDailyCapRule(terms),
    clientDailyCapRule(terms),
    ...perAccount.flatMap(({ account, role }) => [
      senderDailyUsdRule(terms, account, role),
      senderHourlyOpsRule(terms, account, role),
    ]),
  ].filter((rule) => rule.limit !== null);
}
