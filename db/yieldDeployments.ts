import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type {
  YieldBranding,
  YieldContractSetsTable,
  YieldDeploymentStatus,
  YieldDeploymentsTable,
  YieldVaultRecord,
} from './schema';

/**
 * A merchant's yield deployments and the contract sets their workflows deployed. Every read and every
 * transition is scoped by merchant; a transition is one conditional UPDATE on the state it leaves, so two
 * racing requests cannot both move a deployment.
 */

export type YieldDeploymentRow = Selectable<YieldDeploymentsTable>;
export type YieldContractSetRow = Selectable<YieldContractSetsTable>;

export async function insertYieldDeployment(
  db: Db,
  values: { merchantId: string; name: string; chainId: number; tokens: string[]; branding: YieldBranding },
): Promise<YieldDeploymentRow> {
  return db
    .insertInto('yield_deployments')
    .values({
      merchant_id: values.merchantId,
      name: values.name,
      chain_id: values.chainId,
      status: 'draft',
      tokens: JSON.stringify(values.tokens),
      branding: JSON.stringify(values.branding),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The merchant's deployments, newest first. */
export async function listYieldDeployments(db: Db, merchantId: string): Promise<YieldDeploymentRow[]> {
  return db
    .selectFrom('yield_deployments')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

export async function findYieldDeployment(
  db: Db,
  merchantId: string,
  id: string,
): Promise<YieldDeploymentRow | undefined> {
  return db
    .selectFrom('yield_deployments')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}

/** A deployment by id alone: for the deploy workflow and the public site, which hold no merchant session. */
export async function findYieldDeploymentById(db: Db, id: string): Promise<YieldDeploymentRow | undefined> {
  return db.selectFrom('yield_deployments').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateYieldDeploymentDetails(
  db: Db,
  merchantId: string,
  id: string,
  changes: { name?: string; branding?: YieldBranding },
): Promise<YieldDeploymentRow | undefined> {
  return db
    .updateTable('yield_deployments')
    .set({
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.branding !== undefined && { branding: JSON.stringify(changes.branding) }),
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .returningAll()
    .executeTakeFirst();
}

/** True when the merchant's draft was deleted (its domains go with it). */
export async function deleteDraftYieldDeployment(db: Db, merchantId: string, id: string): Promise<boolean> {
  const deleted = await db
    .deleteFrom('yield_deployments')
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .where('status', '=', 'draft')
    .executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

type TransitionChanges = Partial<{
  contract_set_id: string | null;
  failure_reason: string | null;
  sunset_at: Date | null;
  deploy_raw_tx: null;
  deploy_tx_hash: null;
  deploy_nonce: null;
}>;

/** Moves the merchant's deployment from one of `from` to `to`; undefined when it was in another state. */
export async function transitionYieldDeployment(
  db: Db,
  {
    merchantId,
    id,
    from,
    to,
    changes = {},
    unconfigured = false,
  }: {
    merchantId: string;
    id: string;
    from: YieldDeploymentStatus[];
    to: YieldDeploymentStatus;
    changes?: TransitionChanges;
    /** Only when no contract set is linked yet. */
    unconfigured?: boolean;
  },
): Promise<YieldDeploymentRow | undefined> {
  let update = db
    .updateTable('yield_deployments')
    .set({ status: to, ...changes, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .where('status', 'in', from);
  if (unconfigured) update = update.where('contract_set_id', 'is', null);
  return update.returningAll().executeTakeFirst();
}

/** Records the signed factory transaction of a deploying deployment before it is broadcast. */
export async function recordDeployTransaction(
  db: Db,
  id: string,
  tx: { rawTransaction: string; txHash: string; nonce: number },
): Promise<void> {
  await db
    .updateTable('yield_deployments')
    .set({ deploy_raw_tx: tx.rawTransaction, deploy_tx_hash: tx.txHash, deploy_nonce: tx.nonce })
    .where('id', '=', id)
    .where('status', '=', 'deploying')
    .execute();
}

/** Forgets a recorded transaction that was never mined (its nonce went to another one). */
export async function discardDeployTransaction(db: Db, id: string): Promise<void> {
  await db
    .updateTable('yield_deployments')
    .set({ deploy_raw_tx: null, deploy_tx_hash: null, deploy_nonce: null })
    .where('id', '=', id)
    .execute();
}

/**
 * Stores the set a deployment's workflow deployed (once, however often it is called) and makes the
 * deployment active with it, in one transaction.
 */
export async function storeContractSetAndActivate(
  db: Db,
  set: {
    deploymentId: string;
    merchantId: string;
    chainId: number;
    factory: string;
    txHash: string;
    vaults: YieldVaultRecord[];
    deployedAt: Date;
  },
): Promise<YieldContractSetRow> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('yield_contract_sets')
      .values({
        merchant_id: set.merchantId,
        chain_id: set.chainId,
        deployed_by_deployment_id: set.deploymentId,
        factory: set.factory,
        tx_hash: set.txHash,
        vaults: JSON.stringify(set.vaults),
        deployed_at: set.deployedAt,
      })
      .onConflict((conflict) => conflict.column('deployed_by_deployment_id').doNothing())
      .execute();
    const stored = await trx
      .selectFrom('yield_contract_sets')
      .selectAll()
      .where('deployed_by_deployment_id', '=', set.deploymentId)
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('yield_deployments')
      .set({ status: 'active', contract_set_id: stored.id, failure_reason: null, updated_at: sql`now()` })
      .where('id', '=', set.deploymentId)
      .where('status', '=', 'deploying')
      .execute();
    return stored;
  });
}

/** Marks a deploying deployment failed with the reason (the revert, or why it could not be sent). */
export async function failYieldDeployment(db: Db, id: string, reason: string): Promise<void> {
  await db
    .updateTable('yield_deployments')
    .set({ status: 'failed', failure_reason: reason, failed_at: sql`now()`, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('status', '=', 'deploying')
    .execute();
}

/** The merchant's contract sets on a chain, newest first. */
export async function listContractSets(
  db: Db,
  merchantId: string,
  chainId: number,
): Promise<YieldContractSetRow[]> {
  return db
    .selectFrom('yield_contract_sets')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('chain_id', '=', chainId)
    .orderBy('deployed_at', 'desc')
    .orderBy('id')
    .execute();
}

export async function findContractSets(db: Db, ids: string[]): Promise<YieldContractSetRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('yield_contract_sets').selectAll().where('id', 'in', ids).execute();
}

export async function findMerchantContractSet(
  db: Db,
  merchantId: string,
  id: string,
): Promise<YieldContractSetRow | undefined> {
  return db
    .selectFrom('yield_contract_sets')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
}
