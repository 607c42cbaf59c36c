import { getAddress } from 'viem';
import { z } from 'zod';
import {
  deleteDenyRule,
  listDenyRules,
  upsertDenyRule,
  type DenyRuleRow,
} from '../../../db/paymasterPolicies';
import type { AppContext } from '../../appContext';
import { notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { evmAddress, idParams, optionalLabel, supportedChainId } from './fields';

/**
 * | GET    | /v1/paymaster/deny-rules      | 200 list of sender and target rules |
 * | POST   | /v1/paymaster/deny-rules      | rule → 200 rule (add or update) |
 * | DELETE | /v1/paymaster/deny-rules/{id} | 204 |
 *
 * A rule `{ chainId, kind: "sender" | "target", address, label? }` blocks that sender, or any call
 * to that target, on that chain; unique per (chainId, kind, address). Checked before the allowlist.
 */

const ruleBody = z
  .object({
    chainId: supportedChainId,
    kind: z.enum(['sender', 'target']),
    address: evmAddress,
    label: optionalLabel,
  })
  .strict()
  .meta({ id: 'DenyRuleUpsert' });

const rule = z
  .object({
    id: z.string(),
    chainId: z.number(),
    kind: z.enum(['sender', 'target']),
    address: z.string(),
    label: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'DenyRule' });

function toRule(row: DenyRuleRow): z.infer<typeof rule> {
  return {
    id: row.id,
    chainId: row.chain_id,
    kind: row.kind,
    address: getAddress(row.address),
    label: row.label,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function paymasterDenyRuleRoutes(app: AppContext): AnyRoute[] {
  const common = { auth: 'jwt', tag: 'Paymaster policies', audience: 'dashboard' } as const;
  return [
    defineRoute({
      ...common,
      method: 'get',
      path: '/v1/paymaster/deny-rules',
      summary: 'List deny rules',
      responses: { 200: { description: 'Rules', schema: z.object({ data: z.array(rule) }) } },
      async handler({ merchantId }) {
        return { status: 200, body: { data: (await listDenyRules(app.db, merchantId)).map(toRule) } };
      },
    }),

    defineRoute({
      ...common,
      method: 'post',
      path: '/v1/paymaster/deny-rules',
      summary: 'Block a sender or a call target on a chain (upsert on chainId, kind and address)',
      body: ruleBody,
      responses: { 200: { description: 'The rule', schema: rule } },
      async handler({ merchantId, body }) {
        const row = await upsertDenyRule(app.db, {
          merchantId,
          chainId: body.chainId,
          kind: body.kind,
          address: body.address,
          label: body.label ?? null,
        });
        app.paymasterConfigs.invalidate(merchantId);
        return { status: 200, body: toRule(row) };
      },
    }),

    defineRoute({
      ...common,
      method: 'delete',
      path: '/v1/paymaster/deny-rules/:id',
      summary: 'Remove a deny rule',
      params: idParams,
      responses: { 204: { description: 'Removed' }, 404: { description: 'Unknown rule' } },
      async handler({ merchantId, params }) {
        const deleted = await deleteDenyRule(app.db, merchantId, params.id);
        app.paymasterConfigs.invalidate(merchantId);
        if (!deleted) throw notFound('Deny rule not found');
        return { status: 204 };
      },
    }),
  ];
}
