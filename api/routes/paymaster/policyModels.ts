import { getAddress } from 'viem';
import { z } from 'zod';
import type { SponsorshipPolicyFields, SponsorshipPolicyRow } from '../../../db/paymasterSponsorshipPolicies';
import type { PolicyBudget } from '../../../db/schema';
import { validationFailed, type FieldError } from '../../httpErrors';
import { webhookUrlProblem, type WebhookUrlPolicy } from '../../../webhooks/webhookUrl';
import { evmAddress, optionalLabel, supportedChainId } from './fields';
import { usdLimit } from './limits';

/**
 * Request and response shapes of a paymaster client's sponsorship policies (docs/paymaster.md "Sponsorship policies (issue 43)"), and the
 * rules a body must keep beyond its shape: a window that has not ended and ends after it starts,
 * chains the client allows, one budget per (kind, period, scope), an approval URL that follows the
 * event endpoints' rules.
 */

export const POLICY_BUDGET_KINDS = ['usd', 'operations'] as const;
export const POLICY_BUDGET_PERIODS = ['day', 'week', 'month', 'lifetime'] as const;
export const POLICY_BUDGET_SCOPES = ['policy', 'sender'] as const;
export const APPROVAL_TIMEOUT_MS = { default: 2000, max: 5000 } as const;
const MAX_ALLOWLIST_ENTRIES = 200;
const MAX_BUDGETS = 10;
const MAX_OPERATIONS_BUDGET = 1_000_000_000;

export const policyParams = z.object({ id: z.string().uuid(), policyId: z.string().uuid() });

const name = z.string().trim().min(1, 'must not be empty').max(100);
const chainIds = z
  .array(supportedChainId)
  .min(1, 'must list at least one chain (null: every chain of the client)')
  .transform((ids) => [...new Set(ids)])
  .nullable()
  .describe('Chains the policy covers; null: every chain the client allows');
const allowlist = z
  .array(z.object({ chainId: supportedChainId, contractAddress: evmAddress, label: optionalLabel }).strict())
  .max(MAX_ALLOWLIST_ENTRIES)
  .nullable()
  .describe(
    "The policy's contract allowlist; null: the merchant's shared allowlist (/v1/paymaster/allowlist)",
  );
const timestamp = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 timestamp' })
  .transform((text) => new Date(text))
  .nullable();

/** Whole operations: a positive integer, as a string like the USD amounts. */
const operationsAmount = z
  .string({ error: 'must be a whole number of operations as a string' })
  .regex(/^[1-9]\d{0,9}$/, 'must be a positive whole number of operations')
  .refine(
    (text) => !/^\d+$/.test(text) || Number(text) <= MAX_OPERATIONS_BUDGET,
    'must be at most 1000000000',
  );

const budget = z.discriminatedUnion(
  'kind',
  [
    z.object({
      kind: z.literal('usd'),
      amount: usdLimit,
      period: z.enum(POLICY_BUDGET_PERIODS),
      scope: z.enum(POLICY_BUDGET_SCOPES),
    }),
    z.object({
      kind: z.literal('operations'),
      amount: operationsAmount,
      period: z.enum(POLICY_BUDGET_PERIODS),
      scope: z.enum(POLICY_BUDGET_SCOPES),
    }),
  ],
  { error: `kind must be one of: ${POLICY_BUDGET_KINDS.join(', ')}` },
);
const budgets = z.array(budget).max(MAX_BUDGETS);

const approvalWebhook = z
  .object({
    url: z.string({ error: 'must be an absolute https URL' }).trim().min(1, 'must be an absolute https URL'),
    timeoutMs: z.number().int().min(100).max(APPROVAL_TIMEOUT_MS.max).default(APPROVAL_TIMEOUT_MS.default),
    onError: z.enum(['deny', 'allow']).default('deny'),
  })
  .strict()
  .nullable();

export const createPolicyBody = z
  .object({
    name,
    chainIds: chainIds.default(null),
    allowlist: allowlist.default(null),
    startsAt: timestamp.default(null),
    endsAt: timestamp.default(null),
    budgets: budgets.default([]),
    approvalWebhook: approvalWebhook.default(null),
  })
  .strict()
  .meta({ id: 'PaymasterPolicyCreate' });

export const updatePolicyBody = z
  .object({
    name: name.optional(),
    chainIds: chainIds.optional(),
    allowlist: allowlist.optional(),
    startsAt: timestamp.optional(),
    endsAt: timestamp.optional(),
    budgets: budgets.optional(),
    approvalWebhook: approvalWebhook.optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'must change at least one field')
  .meta({ id: 'PaymasterPolicyUpdate' });

export const reorderPoliciesBody = z
  .object({
    policyIds: z
      .array(z.string().uuid())
      .min(1)
      .describe('Every policy of the client, each once, in the new order (the first is tried first)'),
  })
  .strict()
  .meta({ id: 'PaymasterPolicyOrder' });

export const policyModel = z
  .object({
    id: z.string(),
    clientId: z.string().describe('The paymaster client (its id, not the publishable pmc_ id)'),
    name: z.string(),
    position: z.number().describe('0 is tried first'),
    chainIds: z.array(z.number()).nullable(),
    allowlist: z
      .array(z.object({ chainId: z.number(), contractAddress: z.string(), label: z.string().nullable() }))
      .nullable(),
    startsAt: z.string().nullable(),
    endsAt: z.string().nullable(),
    budgets: z.array(
      z.object({
        kind: z.enum(POLICY_BUDGET_KINDS),
        amount: z.string(),
        period: z.enum(POLICY_BUDGET_PERIODS),
        scope: z.enum(POLICY_BUDGET_SCOPES),
      }),
    ),
    approvalWebhook: z
      .object({
        url: z.string(),
        timeoutMs: z.number(),
        onError: z.enum(['deny', 'allow']),
        secret: z
          .string()
          .optional()
          .describe(
            'The whsec_ secret approval requests are signed with (X-Service-Signature, as events): only in the answer that set the webhook up; stored encrypted',
          ),
      })
      .nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'PaymasterPolicy' });

/** A policy as the API shows it; `approvalSecret` only in the answer that generated it (shown once). */
export function toPolicyModel(
  row: SponsorshipPolicyRow,
  approvalSecret?: string,
): z.infer<typeof policyModel> {
  const webhook = row.approval_webhook;
  return {
    id: row.id,
    clientId: row.client_id,
    name: row.name,
    position: row.position,
    chainIds: row.chain_ids,
    allowlist:
      row.allowlist?.map((entry) => ({
        chainId: entry.chainId,
        contractAddress: getAddress(entry.contractAddress),
        label: entry.label,
      })) ?? null,
    startsAt: row.starts_at?.toISOString() ?? null,
    endsAt: row.ends_at?.toISOString() ?? null,
    budgets: row.budgets,
    approvalWebhook: webhook && {
      url: webhook.url,
      timeoutMs: webhook.timeoutMs,
      onError: webhook.onError,
      ...(approvalSecret !== undefined && { secret: approvalSecret }),
    },
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

type PolicyBody = Partial<z.infer<typeof createPolicyBody>>;

/** The body's fields as stored (allowlist labels null when absent). */
export function policyFieldsOf(body: PolicyBody): Partial<SponsorshipPolicyFields> {
  return {
    ...(body.name !== undefined && { name: body.name }),
    ...(body.chainIds !== undefined && { chainIds: body.chainIds }),
    ...(body.allowlist !== undefined && {
      allowlist:
        body.allowlist?.map((entry) => ({
          chainId: entry.chainId,
          contractAddress: entry.contractAddress,
          label: entry.label ?? null,
        })) ?? null,
    }),
    ...(body.startsAt !== undefined && { startsAt: body.startsAt }),
    ...(body.endsAt !== undefined && { endsAt: body.endsAt }),
    ...(body.budgets !== undefined && { budgets: body.budgets as PolicyBudget[] }),
    ...(body.approvalWebhook !== undefined && { approvalWebhook: body.approvalWebhook }),
  };
}

/**
 * The rules a policy keeps beyond its shape, over the body merged onto what is stored (`stored` for an
 * update): 400 naming every field that breaks one, before anything is saved.
 */
export function checkPolicyRules(
  body: PolicyBody,
  {
    stored,
    now,
    clientChainIds,
    urlPolicy,
  }: {
    stored?: Pick<SponsorshipPolicyFields, 'startsAt' | 'endsAt'>;
    now: Date;
    clientChainIds: number[];
    urlPolicy: WebhookUrlPolicy;
  },
): void {
  const errors: FieldError[] = [];
  const startsAt = body.startsAt !== undefined ? body.startsAt : (stored?.startsAt ?? null);
  const endsAt = body.endsAt !== undefined ? body.endsAt : (stored?.endsAt ?? null);
  if (body.endsAt && body.endsAt.getTime() <= now.getTime()) {
    errors.push({ field: 'endsAt', message: 'must be in the future (the window would never be open)' });
  } else if (startsAt && endsAt && endsAt.getTime() <= startsAt.getTime()) {
    errors.push({ field: 'endsAt', message: 'must be after startsAt' });
  }
  body.chainIds?.forEach((chainId, index) => {
    if (!clientChainIds.includes(chainId))
      errors.push({ field: `chainIds.${index}`, message: "must be one of the client's allowedChainIds" });
  });
  const budgetKeys = (body.budgets ?? []).map((item) => `${item.kind}/${item.period}/${item.scope}`);
  budgetKeys.forEach((key, index) => {
    if (budgetKeys.indexOf(key) !== index)
      errors.push({
        field: `budgets.${index}`,
        message: 'repeats the kind, period and scope of another budget',
      });
  });
  if (body.approvalWebhook) {
    const problem = webhookUrlProblem(body.approvalWebhook.url, urlPolicy);
    if (problem) errors.push({ field: 'approvalWebhook.url', message: problem });
  }
  if (errors.length > 0) throw validationFailed(errors);
}
