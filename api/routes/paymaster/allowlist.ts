import { getAddress } from 'viem';
import { z } from 'zod';
import {
  deleteAllowlistEntry,
  listAllowlistEntries,
  upsertAllowlistEntry,
  type AllowlistEntryRow,
} from '../../../db/paymasterPolicies';
import type { AppContext } from '../../appContext';
import { notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { evmAddress, idParams, optionalLabel, supportedChainId } from './fields';

/**
 * | GET    | /v1/paymaster/allowlist      | 200 list of entries |
 * | POST   | /v1/paymaster/allowlist      | chainId, contractAddress, label? → 200 entry (add or update) |
 * | DELETE | /v1/paymaster/allowlist/{id} | 204 |
 *
 * Unique per (chainId, contractAddress): the upsert replaces the label on the same pair. Default: no
 * contract is allowed. Contract addresses only; call arguments are not examined.
 */

const entryBody = z
  .object({ chainId: supportedChainId, contractAddress: evmAddress, label: optionalLabel })
  .strict()
  .meta({ id: 'AllowlistEntryUpsert' });

const entry = z
  .object({
    id: z.string(),
    chainId: z.number(),
    contractAddress: z.string(),
    label: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'AllowlistEntry' });

function toEntry(row: AllowlistEntryRow): z.infer<typeof entry> {
  return {
    id: row.id,
    chainId: row.chain_id,
    contractAddress: getAddress(row.contract_address),
    label: row.label,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function paymasterAllowlistRoutes(app: AppContext): AnyRoute[] {
  const common = { auth: 'jwt', tag: 'Paymaster policies', audience: 'dashboard' } as const;
  return [
    defineRoute({
      ...common,
      method: 'get',
      path: '/v1/paymaster/allowlist',
      summary: 'List the contract allowlist',
      responses: { 200: { description: 'Entries', schema: z.object({ data: z.array(entry) }) } },
      async handler({ merchantId }) {
        return { status: 200, body: { data: (await listAllowlistEntries(app.db, merchantId)).map(toEntry) } };
      },
    }),

    defineRoute({
      ...common,
      method: 'post',
      path: '/v1/paymaster/allowlist',
      summary: 'Allow a contract on a chain (upsert on chainId and contractAddress)',
      body: entryBody,
      responses: { 200: { description: 'The entry', schema: entry } },
      async handler({ merchantId, body }) {
        const row = await upsertAllowlistEntry(app.db, {
          merchantId,
          chainId: body.chainId,
          contractAddress: body.contractAddress,
          label: body.label ?? null,
        });
        app.paymasterConfigs.invalidate(merchantId);
        return { status: 200, body: toEntry(row) };
      },
    }),

    defineRoute({
      ...common,
      method: 'delete',
      path: '/v1/paymaster/allowlist/:id',
      summary: 'Remove an allowlist entry',
      params: idParams,
      responses: { 204: { description: 'Removed' }, 404: { description: 'Unknown entry' } },
      async handler({ merchantId, params }) {
        const deleted = await deleteAllowlistEntry(app.db, merchantId, params.id);
        app.paymasterConfigs.invalidate(merchantId);
        if (!deleted) throw notFound('Allowlist entry not found');
        return { status: 204 };
      },
    }),
  ];
}
