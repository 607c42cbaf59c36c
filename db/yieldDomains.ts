import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { YieldDomainsTable } from './schema';
import type { YieldDeploymentRow } from './yieldDeployments';

/** Custom domains of yield deployments: unique hostnames across merchants, each with a TXT verification value. */

export type YieldDomainRow = Selectable<YieldDomainsTable>;

/** Another merchant's (or deployment's) domain already has this hostname. */
export class HostnameTakenError extends Error {
  override name = 'HostnameTakenError';
  constructor(readonly hostname: string) {
    super(`Hostname ${hostname} is already attached to a yield deployment`);
  }
}

export async function insertYieldDomain(
  db: Db,
  values: { deploymentId: string; merchantId: string; hostname: string; verificationValue: string },
): Promise<YieldDomainRow> {
  try {
    return await db
      .insertInto('yield_domains')
      .values({
        deployment_id: values.deploymentId,
        merchant_id: values.merchantId,
        hostname: values.hostname,
        verification_value: values.verificationValue,
        status: 'pending',
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new HostnameTakenError(values.hostname);
    throw error;
  }
}

/** The domains of these deployments, oldest first. */
export async function listYieldDomains(db: Db, deploymentIds: string[]): Promise<YieldDomainRow[]> {
  if (deploymentIds.length === 0) return [];
  return db
    .selectFrom('yield_domains')
    .selectAll()
    .where('deployment_id', 'in', deploymentIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** True when the merchant's deployment had this domain (it is gone now, and its site with it). */
export async function deleteYieldDomain(
  db: Db,
  { merchantId, deploymentId, domainId }: { merchantId: string; deploymentId: string; domainId: string },
): Promise<boolean> {
  const deleted = await db
    .deleteFrom('yield_domains')
    .where('id', '=', domainId)
    .where('deployment_id', '=', deploymentId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

export async function findYieldDomainById(db: Db, id: string): Promise<YieldDomainRow | undefined> {
  return db.selectFrom('yield_domains').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Settles a pending domain as verified or failed; a domain removed meanwhile is left alone. */
export async function settleYieldDomain(
  db: Db,
  id: string,
  status: 'verified' | 'failed',
): Promise<YieldDomainRow | undefined> {
  return db
    .updateTable('yield_domains')
    .set({ status, ...(status === 'verified' && { verified_at: sql<Date>`now()` }) })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** The deployment a verified hostname serves. */
export async function findDeploymentByVerifiedHostname(
  db: Db,
  hostname: string,
): Promise<YieldDeploymentRow | undefined> {
  return db
    .selectFrom('yield_domains')
    .innerJoin('yield_deployments', 'yield_deployments.id', 'yield_domains.deployment_id')
    .selectAll('yield_deployments')
    .where('yield_domains.hostname', '=', hostname)
    .where('yield_domains.status', '=', 'verified')
    .executeTakeFirst();
}
