import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { YieldDomainsTable } from './schema';
import type { YieldDeploymentRow } from './yieldDeployments';

/**
 * Custom domains of yield deployments, each with a TXT verification value. Only a verified row holds its
 * hostname (one across merchants); pending and failed rows hold nothing (security review II, finding 1).
 */

export type YieldDomainRow = Selectable<YieldDomainsTable>;

/** A verified domain already holds this hostname, or this merchant has it pending already. */
export class HostnameTakenError extends Error {
  override name = 'HostnameTakenError';
  constructor(
    readonly hostname: string,
    readonly by: 'verified' | 'own_pending',
  ) {
    super(
      by === 'verified'
        ? `Hostname ${hostname} is already verified by a yield deployment`
        : `Hostname ${hostname} is already attached to one of your yield deployments`,
    );
  }
}

/** The merchant has as many pending domains as it may have. */
export class PendingDomainsCapError extends Error {
  override name = 'PendingDomainsCapError';
  constructor(readonly cap: number) {
    super(
      `A merchant may have at most ${cap} pending domains: remove one, or wait until one is verified or fails`,
    );
  }
}

/**
 * Attaches a pending domain. The merchant's row is locked for the count, so concurrent attaches never
 * exceed `maxPending`; a hostname some verified row holds, or that this merchant has pending, is refused.
 */
export async function insertYieldDomain(
  db: Db,
  values: { deploymentId: string; merchantId: string; hostname: string; verificationValue: string },
  { maxPending }: { maxPending: number } = { maxPending: Number.MAX_SAFE_INTEGER },
): Promise<YieldDomainRow> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('merchants').select('id').where('id', '=', values.merchantId).forUpdate().execute();
    const holders = await trx
      .selectFrom('yield_domains')
      .select(['status', 'merchant_id'])
      .where('hostname', '=', values.hostname)
      .where('status', 'in', ['verified', 'pending'])
      .execute();
    if (holders.some((row) => row.status === 'verified'))
      throw new HostnameTakenError(values.hostname, 'verified');
    if (holders.some((row) => row.merchant_id === values.merchantId))
      throw new HostnameTakenError(values.hostname, 'own_pending');
    const { pending } = await trx
      .selectFrom('yield_domains')
      .select((eb) => eb.fn.countAll<string>().as('pending'))
      .where('merchant_id', '=', values.merchantId)
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    if (Number(pending) >= maxPending) throw new PendingDomainsCapError(maxPending);
    return trx
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
  });
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

/** Fails a pending domain (its seven days passed); a domain removed or settled meanwhile is left alone. */
export async function failPendingYieldDomain(db: Db, id: string): Promise<YieldDomainRow | undefined> {
  return db
    .updateTable('yield_domains')
    .set({ status: 'failed' })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/**
 * A pending domain proved its TXT record: it takes the hostname, and every other pending row of that
 * hostname fails (a newer proof wins over them). 'held' when a verified row holds the hostname already
 * (the proof waits until that one lapses); undefined when the domain is gone or no longer pending.
 */
export async function verifyYieldDomain(db: Db, id: string): Promise<YieldDomainRow | 'held' | undefined> {
  try {
    return await db.transaction().execute(async (trx) => {
      const verified = await trx
        .updateTable('yield_domains')
        .set({ status: 'verified', verified_at: sql<Date>`now()` })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
      if (!verified) return undefined;
      await trx
        .updateTable('yield_domains')
        .set({ status: 'failed' })
        .where('hostname', '=', verified.hostname)
        .where('status', '=', 'pending')
        .where('id', '<>', id)
        .execute();
      return verified;
    });
  } catch (error) {
    // The partial unique index: another row holds the hostname verified.
    if ((error as { code?: string }).code === '23505') return 'held';
    throw error;
  }
}

/** A verified domain whose TXT record stayed away past the grace period: it stops and frees its hostname. */
export async function releaseVerifiedYieldDomain(db: Db, id: string): Promise<YieldDomainRow | undefined> {
  return db
    .updateTable('yield_domains')
    .set({ status: 'failed' })
    .where('id', '=', id)
    .where('status', '=', 'verified')
    .returningAll()
    .executeTakeFirst();
}

/** Whether some verified domain holds this hostname (lower-case). */
export async function isVerifiedYieldHostname(db: Db, hostname: string): Promise<boolean> {
  const row = await db
    .selectFrom('yield_domains')
    .select('id')
    .where('hostname', '=', hostname)
    .where('status', '=', 'verified')
    .executeTakeFirst();
  return row !== undefined;
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
