import { sql } from 'kysely';
import type { Db } from './client';
import {
  releaseYieldDeployCharge,
  reserveYieldDeployCharge,
  type ChargeRefusal,
  type DeployBudget,
  type DeployChargeTerms,
} from './yieldDeployCharges';
import type { YieldDeploymentRow } from './yieldDeployments';

/**
 * Queuing a vault deploy under its limits (issue 26, finding 6; security review III, finding 2): each deploy
 * costs the platform gas, so a merchant may queue `dailyLimit` per UTC day, a failed deployment waits
 * `backoffSec` from its failure before it is deployed again, all merchants together queue at most the
 * chain's daily budget (deploys and wei), and on a mainnet the deploy's maximum charge is held against the
 * merchant's prepaid balance. One transaction: the deployment row is locked, the day's counters taken by
 * conditional upserts (their row locks serialise concurrent requests, the WHERE refuses the one past the
 * limit), the charge reserved (db/yieldDeployCharges.ts), then the row moves to deploying — all or nothing.
 */

export type QueueDeployOutcome =
  | { outcome: 'queued'; row: YieldDeploymentRow }
  | { outcome: 'not_found' }
  /** Not a draft or failed deployment without a linked contract set. */
  | { outcome: 'wrong_state'; row: YieldDeploymentRow }
  | { outcome: 'backing_off'; retryAfterSec: number }
  | { outcome: 'daily_limit'; retryAfterSec: number }
  | { outcome: 'platform_budget'; retryAfterSec: number }
  | Extract<ChargeRefusal, { outcome: 'prepaid_balance' }>;

/** A refusal after counters were taken: thrown to roll the transaction back, answered as the outcome. */
class QueueRefused extends Error {
  constructor(readonly refusal: QueueDeployOutcome) {
    super(refusal.outcome);
  }
}

export interface QueueDeployRequest {
  merchantId: string;
  id: string;
  now: Date;
  dailyLimit: number;
  backoffSec: number;
  /** The deploy's gas bound and, on a mainnet, its price (yield/deployCharge.ts). */
  charge: DeployChargeTerms;
  /** The platform's daily deploy budget of the deployment's chain. */
  budget: DeployBudget;
}

export async function queueYieldDeploy(db: Db, request: QueueDeployRequest): Promise<QueueDeployOutcome> {
  return db
    .transaction()
    .execute((trx) => queueInTransaction(trx, request))
    .catch((error: unknown) => {
      if (error instanceof QueueRefused) return error.refusal;
      throw error;
    });
}

async function queueInTransaction(
  trx: Db,
  { merchantId, id, now, dailyLimit, backoffSec, charge, budget }: QueueDeployRequest,
): Promise<QueueDeployOutcome> {
  const row = await trx
    .selectFrom('yield_deployments')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .forUpdate()
    .executeTakeFirst();
  if (!row) return { outcome: 'not_found' };
  if (!(row.status === 'draft' || row.status === 'failed') || row.contract_set_id !== null) {
    return { outcome: 'wrong_state', row };
  }
  if (row.status === 'failed' && row.failed_at) {
    const readyAtMs = row.failed_at.getTime() + backoffSec * 1000;
    if (readyAtMs > now.getTime()) {
      return { outcome: 'backing_off', retryAfterSec: Math.ceil((readyAtMs - now.getTime()) / 1000) };
    }
  }
  const taken = await trx
    .insertInto('yield_deploy_counters')
    .values({ merchant_id: merchantId, day: utcDayOf(now), used: 1 })
    .onConflict((conflict) =>
      conflict
        .columns(['merchant_id', 'day'])
        .doUpdateSet((eb) => ({ used: eb('yield_deploy_counters.used', '+', 1) }))
        .where('yield_deploy_counters.used', '<', dailyLimit),
    )
    .returning('used')
    .executeTakeFirst();
  if (!taken) return { outcome: 'daily_limit', retryAfterSec: secondsToNextUtcDay(now) };
  const reserved = await reserveYieldDeployCharge(trx, {
    deploymentId: id,
    merchantId,
    chainId: row.chain_id,
    day: utcDayOf(now),
    now,
    terms: charge,
    budget,
  });
  if (reserved.outcome === 'platform_budget') {
    throw new QueueRefused({ outcome: 'platform_budget', retryAfterSec: secondsToNextUtcDay(now) });
  }
  if (reserved.outcome === 'prepaid_balance') throw new QueueRefused(reserved);
  const queued = await trx
    .updateTable('yield_deployments')
    .set({
      status: 'deploying',
      failure_reason: null,
      deploy_raw_tx: null,
      deploy_tx_hash: null,
      deploy_nonce: null,
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { outcome: 'queued', row: queued };
}

/**
 * Gives back a deploy taken on `now`'s UTC day that was never started (Temporal did not accept it): the
 * merchant's count, the chain's budget and the prepaid hold.
 */
export async function returnYieldDeploy(
  db: Db,
  { merchantId, deploymentId, now }: { merchantId: string; deploymentId: string; now: Date },
) {
  await releaseYieldDeployCharge(db, { deploymentId, uncount: true });
  await db
    .updateTable('yield_deploy_counters')
    .set((eb) => ({ used: eb('used', '-', 1) }))
    .where('merchant_id', '=', merchantId)
    .where('day', '=', utcDayOf(now))
    .where('used', '>', 0)
    .execute();
}

function utcDayOf(now: Date): string {
  return now.toISOString().slice(0, 10);
}

function secondsToNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
