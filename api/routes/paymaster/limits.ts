import { z } from 'zod';
import { saveMerchantLimits } from '../../../db/paymasterLimits';
import {
  LIMIT_KEYS,
  type LimitKey,
  limitsViews,
  looserThanPlatform,
  platformLimits,
  type LimitsView,
  type LimitsViews,
} from '../../../paymaster/limits/limitViews';
import { usdToMicro } from '../../../money/microUsd';
import type { AppContext } from '../../appContext';
import { validationFailed } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';

/**
 * | GET   | /v1/paymaster/limits | 200 platform, merchant, effective limits |
 * | PATCH | /v1/paymaster/limits | limits to tighten; null clears one → 200 limits |
 *
 * Limits: `{ platform, merchant, effective }`, each `{ perSenderHourlyOps, perSenderDailyUsd, perTxUsd,
 * perMerchantDailyUsd, perClientDailyUsd, dailyBudgetUsd, testnetDailyBudgetUsd, merchantBudgetShareBps,
 * feeBoundBps, maxOperationGas }` (numbers of ops, decimal USD strings, basis points, gas; null = none).
 * The effective value is the lower of platform and merchant; the last five are the platform's alone
 * (null in the merchant view). PATCH takes any of the first five keys; a value looser than the
 * platform's answers 400; null clears the merchant value back to the platform default.
 */

const MAX_USD_MICRO = usdToMicro('1000000000');

/** Positive decimal USD, at most 6 fractional digits, at most 1,000,000,000 (docs/service-contract.md "Conventions" amounts). */
const USD_PATTERN = /^(?:0|[1-9]\d{0,9})(?:\.\d{1,6})?$/;
export const usdLimit = z
  .string()
  .regex(USD_PATTERN, 'must be a decimal USD string with at most 6 decimals')
  // The later checks only read well-formed amounts: the pattern's message already covers the rest.
  .refine((text) => !USD_PATTERN.test(text) || !/^0(?:\.0+)?$/.test(text), 'must be positive')
  .refine(
    (text) => !USD_PATTERN.test(text) || usdToMicro(text) <= MAX_USD_MICRO,
    'must be at most 1000000000',
  );

const limitsPatch = z
  .object({
    perSenderHourlyOps: z.number().int().min(1).max(1_000_000).nullable().optional(),
    perSenderDailyUsd: usdLimit.nullable().optional(),
    perTxUsd: usdLimit.nullable().optional(),
    perMerchantDailyUsd: usdLimit.nullable().optional(),
    perClientDailyUsd: usdLimit.nullable().optional(),
  })
  .strict()
  .meta({ id: 'PaymasterLimitsPatch' });

const limitsView = z
  .object({
    perSenderHourlyOps: z.number().nullable(),
    perSenderDailyUsd: z.string().nullable(),
    perTxUsd: z.string().nullable(),
    perMerchantDailyUsd: z
      .string()
      .nullable()
      .describe('Sponsored USD per merchant per UTC day and network class'),
    perClientDailyUsd: z.string().nullable().describe('Sponsored USD per paymaster client per UTC day'),
    dailyBudgetUsd: z
      .string()
      .nullable()
      .describe('Platform daily sponsorship budget on mainnets (platform only)'),
    testnetDailyBudgetUsd: z
      .string()
      .nullable()
      .describe('Platform daily sponsorship budget on testnets (platform only)'),
    merchantBudgetShareBps: z
      .number()
      .nullable()
      .describe('Share of each daily budget one merchant may hold or spend (platform only)'),
    feeBoundBps: z
      .number()
      .nullable()
      .describe("maxFeePerGas at most this share of the chain's 2 × base fee + priority fee (platform only)"),
    maxOperationGas: z
      .number()
      .nullable()
      .describe('Most gas one signed operation may carry, preVerificationGas included (platform only)'),
  })
  .meta({ id: 'PaymasterLimitsView' });

const limits = z
  .object({ platform: limitsView, merchant: limitsView, effective: limitsView })
  .meta({ id: 'PaymasterLimits' });

export function paymasterLimitRoutes(app: AppContext): AnyRoute[] {
  const common = { auth: 'jwt', tag: 'Paymaster policies', audience: 'dashboard' } as const;
  return [
    defineRoute({
      ...common,
      method: 'get',
      path: '/v1/paymaster/limits',
      summary: 'Sponsorship limits: platform, merchant and effective views',
      responses: { 200: { description: 'Limits', schema: limits } },
      async handler({ merchantId }): Promise<{ status: 200; body: LimitsViews }> {
        return { status: 200, body: await limitsViews(app.db, app.config, merchantId) };
      },
    }),

    defineRoute({
      ...common,
      method: 'patch',
      path: '/v1/paymaster/limits',
      summary: 'Tighten sponsorship limits (null clears a merchant value)',
      body: limitsPatch,
      responses: {
        200: { description: 'Limits', schema: limits },
        400: { description: 'Invalid value, or a value looser than the platform limit' },
      },
      async handler({ merchantId, body }) {
        const platform = platformLimits(app.config);
        const looser = looserThanPlatform(platform, body);
        if (looser.length > 0) {
          throw validationFailed(
            looser.map((key) => ({
              field: key,
              message: `${body[key]} is looser than the platform limit ${platform[key]}; limits may only be tightened`,
            })),
          );
        }
        // Keys left out keep their value; null clears one back to the platform default. One statement
        // sets only the given keys: a concurrent PATCH of another key is never written back over.
        const given = Object.fromEntries(
          LIMIT_KEYS.filter((key) => body[key] !== undefined).map((key) => [key, body[key]]),
        ) as Partial<Pick<LimitsView, LimitKey>>;
        await saveMerchantLimits(app.db, merchantId, given);
        app.paymasterConfigs.invalidate(merchantId);
        return { status: 200, body: await limitsViews(app.db, app.config, merchantId) };
      },
    }),
  ];
}
