import { sql } from 'kysely';
import type { Db } from './client';
import type { YieldDeploymentRow } from './yieldDeployments';

/**
 * Queuing a vault deploy under its limits (issue 26, finding 6): each deploy costs the platform gas, so a
 * merchant may queue `dailyLimit` per UTC day, and a failed deployment waits `backoffSec` from its failure
 * before it is deployed again. One transaction: the deployment row is locked, the day's counter taken by a
 * conditional upsert (its row lock serialises concurrent requests, the WHERE refuses the one past the
 * limit), then the row moves to deploying — all or nothing.
 */

export type QueueDeployOutcome =
  | { outcome: 'queued'; row: YieldDeploymentRow }
  | { outcome: 'not_found' }
  /** Not a draft or failed deployment without a linked contract set. */
  | { outcome: 'wrong_state'; row: YieldDeploymentRow }
  | { outcome: 'backing_off'; retryAfterSec: number }
  | { outcome: 'daily_limit'; retryAfterSec: number };

export async function queueYieldDeploy(
  db: Db,
  {
    merchantId,
    id,
    now,
    dailyLimit,
    backoffSec,
  }: { merchantId: string; id: string; now: Date; dailyLimit: number; backoffSec: number },
): Promise<QueueDeployOutcome> {
  return db.transaction().execute(async (trx) => {
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
  });
}

/** Gives back a deploy taken on `now`'s UTC day that was never started (Temporal did not accept it). */
export async function returnYieldDeploy(db: Db, { merchantId, now }: { merchantId: string; now: Date }) {
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
