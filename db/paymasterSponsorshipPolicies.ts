import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type {
  PaymasterPoliciesTable,
  PolicyAllowlistEntry,
  PolicyApprovalWebhook,
  PolicyBudget,
} from './schema';

/**
 * A paymaster client's sponsorship policies (issue 43, migration 1200), kept in an explicit order:
 * positions 0..n-1 without gaps. Every write that changes positions locks the client's row first, so
 * concurrent creates, deletes and reorders of one client's policies serialise.
 */

export type SponsorshipPolicyRow = Selectable<PaymasterPoliciesTable>;

/** The most policies one client holds. */
export const MAX_POLICIES_PER_CLIENT = 20;

export interface SponsorshipPolicyFields {
  name: string;
  chainIds: number[] | null;
  allowlist: PolicyAllowlistEntry[] | null;
  startsAt: Date | null;
  endsAt: Date | null;
  budgets: PolicyBudget[];
  approvalWebhook: PolicyApprovalWebhook | null;
}

/** The client (row id) when it is the merchant's and active; the policy routes answer 404 otherwise. */
export async function findMerchantClient(
  db: Db,
  merchantId: string,
  clientId: string,
): Promise<{ id: string; allowed_chain_ids: number[] } | undefined> {
  return db
    .selectFrom('paymaster_clients')
    .select(['id', 'allowed_chain_ids'])
    .where('id', '=', clientId)
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** The client's policies in their order. */
export async function listSponsorshipPolicies(db: Db, clientId: string): Promise<SponsorshipPolicyRow[]> {
  return db
    .selectFrom('paymaster_policies')
    .selectAll()
    .where('client_id', '=', clientId)
    .orderBy('position')
    .execute();
}

export async function findSponsorshipPolicy(
  db: Db,
  clientId: string,
  policyId: string,
): Promise<SponsorshipPolicyRow | undefined> {
  return db
    .selectFrom('paymaster_policies')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('id', '=', policyId)
    .executeTakeFirst();
}

const columnsOf = (fields: Partial<SponsorshipPolicyFields>) => ({
  ...(fields.name !== undefined && { name: fields.name }),
  ...(fields.chainIds !== undefined && { chain_ids: fields.chainIds }),
  ...(fields.allowlist !== undefined && {
    allowlist: fields.allowlist === null ? null : JSON.stringify(fields.allowlist),
  }),
  ...(fields.startsAt !== undefined && { starts_at: fields.startsAt }),
  ...(fields.endsAt !== undefined && { ends_at: fields.endsAt }),
  ...(fields.budgets !== undefined && { budgets: JSON.stringify(fields.budgets) }),
  ...(fields.approvalWebhook !== undefined && {
    approval_webhook: fields.approvalWebhook === null ? null : JSON.stringify(fields.approvalWebhook),
  }),
});

/** Locks the client's row for a change of its policies' positions; false when it is gone or revoked. */
async function lockClient(trx: Db, merchantId: string, clientId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('paymaster_clients')
    .select('id')
    .where('id', '=', clientId)
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

export type InsertPolicyOutcome =
  | { ok: true; policy: SponsorshipPolicyRow }
  | { ok: false; reason: 'client_not_found' | 'too_many_policies' };

/** Appends a policy after the client's last one (`id`: chosen by the caller, who sealed a secret to it). */
export async function insertSponsorshipPolicy(
  db: Db,
  {
    id,
    merchantId,
    clientId,
    fields,
  }: { id?: string; merchantId: string; clientId: string; fields: SponsorshipPolicyFields },
): Promise<InsertPolicyOutcome> {
  return db.transaction().execute(async (trx) => {
    if (!(await lockClient(trx, merchantId, clientId))) return { ok: false, reason: 'client_not_found' };
    const { count } = await trx
      .selectFrom('paymaster_policies')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('client_id', '=', clientId)
      .executeTakeFirstOrThrow();
    if (Number(count) >= MAX_POLICIES_PER_CLIENT) return { ok: false, reason: 'too_many_policies' };
    const policy = await trx
      .insertInto('paymaster_policies')
      .values({
        ...(id !== undefined && { id }),
        merchant_id: merchantId,
        client_id: clientId,
        position: Number(count),
        name: fields.name,
        ...columnsOf(fields),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ok: true, policy };
  });
}

/**
 * Changes a policy's rules (never its position); undefined when the client has no such policy, and
 * `'window_ends_before_start'` when a concurrent change of the other end made the window empty (the
 * `paymaster_policies_window_check` constraint refused it; nothing changed).
 */
export async function updateSponsorshipPolicy(
  db: Db,
  {
    clientId,
    policyId,
    fields,
  }: { clientId: string; policyId: string; fields: Partial<SponsorshipPolicyFields> },
): Promise<SponsorshipPolicyRow | 'window_ends_before_start' | undefined> {
  try {
    return await db
      .updateTable('paymaster_policies')
      .set({ ...columnsOf(fields), updated_at: sql`now()` })
      .where('client_id', '=', clientId)
      .where('id', '=', policyId)
      .returningAll()
      .executeTakeFirst();
  } catch (error) {
    const { code, constraint } = error as { code?: string; constraint?: string };
    if (code === '23514' && constraint === 'paymaster_policies_window_check')
      return 'window_ends_before_start';
    throw error;
  }
}

/** Deletes a policy and closes the gap in the order; false when the client has no such policy. */
export async function deleteSponsorshipPolicy(
  db: Db,
  { merchantId, clientId, policyId }: { merchantId: string; clientId: string; policyId: string },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await lockClient(trx, merchantId, clientId))) return false;
    const deleted = await trx
      .deleteFrom('paymaster_policies')
      .where('client_id', '=', clientId)
      .where('id', '=', policyId)
      .returning('position')
      .executeTakeFirst();
    if (!deleted) return false;
    await trx
      .updateTable('paymaster_policies')
      .set({ position: sql`position - 1` })
      .where('client_id', '=', clientId)
      .where('position', '>', deleted.position)
      .execute();
    return true;
  });
}

export type ReorderOutcome =
  | { ok: true; policies: SponsorshipPolicyRow[] }
  | { ok: false; reason: 'client_not_found' | 'not_the_same_policies' };

/** Gives the client's policies the order of `policyIds`, which must name each of them exactly once. */
export async function reorderSponsorshipPolicies(
  db: Db,
  { merchantId, clientId, policyIds }: { merchantId: string; clientId: string; policyIds: string[] },
): Promise<ReorderOutcome> {
  return db.transaction().execute(async (trx) => {
    if (!(await lockClient(trx, merchantId, clientId))) return { ok: false, reason: 'client_not_found' };
    const current = await listSponsorshipPolicies(trx, clientId);
    const known = new Set(current.map((policy) => policy.id));
    const sameSet =
      policyIds.length === current.length &&
      new Set(policyIds).size === policyIds.length &&
      policyIds.every((id) => known.has(id));
    if (!sameSet) return { ok: false, reason: 'not_the_same_policies' };
    // The unique (client, position) constraint is deferred to commit, so the swap happens in one statement.
    await sql`
      UPDATE paymaster_policies AS policy SET position = ordered.position - 1, updated_at = now()
      FROM unnest(${policyIds}::uuid[]) WITH ORDINALITY AS ordered(id, position)
      WHERE policy.id = ordered.id AND policy.client_id = ${clientId}::uuid`.execute(trx);
    return { ok: true, policies: await listSponsorshipPolicies(trx, clientId) };
  });
}
