import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { PaymasterAllowlistEntriesTable, PaymasterDenyRulesTable } from './schema';

/**
 * A merchant's sponsorship policies: the contract allowlist (default: nothing allowed) and the
 * deny rules that block senders and targets. Addresses are passed and stored lower-case.
 */

export type AllowlistEntryRow = Selectable<PaymasterAllowlistEntriesTable>;
export type DenyRuleRow = Selectable<PaymasterDenyRulesTable>;
export type DenyRuleKind = DenyRuleRow['kind'];

/** Adds the entry, or replaces the label of the merchant's entry for the same (chainId, contractAddress). */
export async function upsertAllowlistEntry(
  db: Db,
  entry: { merchantId: string; chainId: number; contractAddress: string; label: string | null },
): Promise<AllowlistEntryRow> {
  return db
    .insertInto('paymaster_allowlist_entries')
    .values({
      merchant_id: entry.merchantId,
      chain_id: entry.chainId,
      contract_address: entry.contractAddress,
      label: entry.label,
    })
    .onConflict((conflict) =>
      conflict
        .columns(['merchant_id', 'chain_id', 'contract_address'])
        .doUpdateSet({ label: entry.label, updated_at: sql`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listAllowlistEntries(db: Db, merchantId: string): Promise<AllowlistEntryRow[]> {
  return db
    .selectFrom('paymaster_allowlist_entries')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('chain_id')
    .orderBy('contract_address')
    .execute();
}

/** True when the merchant had an entry with this id. */
export async function deleteAllowlistEntry(db: Db, merchantId: string, id: string): Promise<boolean> {
  const deleted = await db
    .deleteFrom('paymaster_allowlist_entries')
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

/** Which of `addresses` the merchant allows on `chainId`. */
export async function findAllowlistedAddresses(
  db: Db,
  { merchantId, chainId, addresses }: { merchantId: string; chainId: number; addresses: string[] },
): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await db
    .selectFrom('paymaster_allowlist_entries')
    .select('contract_address')
    .where('merchant_id', '=', merchantId)
    .where('chain_id', '=', chainId)
    .where('contract_address', 'in', [...new Set(addresses)])
    .execute();
  return new Set(rows.map((row) => row.contract_address));
}

/** Adds the rule, or replaces the label of the merchant's rule for the same (chainId, kind, address). */
export async function upsertDenyRule(
  db: Db,
  rule: { merchantId: string; chainId: number; kind: DenyRuleKind; address: string; label: string | null },
): Promise<DenyRuleRow> {
  return db
    .insertInto('paymaster_deny_rules')
    .values({
      merchant_id: rule.merchantId,
      chain_id: rule.chainId,
      kind: rule.kind,
      address: rule.address,
      label: rule.label,
    })
    .onConflict((conflict) =>
      conflict
        .columns(['merchant_id', 'chain_id', 'kind', 'address'])
        .doUpdateSet({ label: rule.label, updated_at: sql`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listDenyRules(db: Db, merchantId: string): Promise<DenyRuleRow[]> {
  return db
    .selectFrom('paymaster_deny_rules')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('chain_id')
    .orderBy('kind')
    .orderBy('address')
    .execute();
}

/** True when the merchant had a rule with this id. */
export async function deleteDenyRule(db: Db, merchantId: string, id: string): Promise<boolean> {
  const deleted = await db
    .deleteFrom('paymaster_deny_rules')
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

/** The merchant's rules on `chainId` that block any of `senders` (kind sender) or `targets` (kind target). */
export async function findMatchingDenyRules(
  db: Db,
  {
    merchantId,
    chainId,
    senders,
    targets,
  }: { merchantId: string; chainId: number; senders: string[]; targets: string[] },
): Promise<Pick<DenyRuleRow, 'kind' | 'address'>[]> {
  if (senders.length === 0 && targets.length === 0) return [];
  return db
    .selectFrom('paymaster_deny_rules')
    .select(['kind', 'address'])
    .where('merchant_id', '=', merchantId)
    .where('chain_id', '=', chainId)
    .where((eb) =>
      eb.or([
        ...(senders.length
          ? [eb.and([eb('kind', '=', 'sender'), eb('address', 'in', [...new Set(senders)])])]
          : []),
        ...(targets.length
          ? [eb.and([eb('kind', '=', 'target'), eb('address', 'in', [...new Set(targets)])])]
          : []),
      ]),
    )
    .execute();
}
