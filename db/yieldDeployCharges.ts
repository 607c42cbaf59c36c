import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { microUsdToFixed6, usdToMicro } from '../money/microUsd';
import { ethUsdDecimalToAnswer, feedAnswerToDecimal } from '../money/usdPriceAnswers';
import type { Db } from './client';
import {
  consumeSponsorshipLimits,
  limitCountersUsage,
  prepaidReservationCounter,
  settleLimitHold,
} from './paymasterLimits';
import { debitPrepaidBalance, prepaidBalanceUsd } from './prepaidLedger';
import type { YieldDeployChargesTable } from './schema';

/**
 * A queued vault deploy's charge (security review III, finding 2; migration 1020): its share of the chain's
 * daily deploy budget and, on a mainnet, its hold on the merchant's prepaid balance. Taken in the
 * transaction that queues the deploy, settled once when the deploy ends.
 *
 * Lock order, the same everywhere: the chain's budget counter, then the merchant's prepaid reservation
 * counter, then the balance row (as the paymaster's signing and receipt steps take the last two), so
 * concurrent deploys and sponsored operations never deadlock and never overshoot.
 */
export type YieldDeployChargeRow = Selectable<YieldDeployChargesTable>;

/**
 * What a vault deploy may cost, fixed when it is queued (security review III, finding 2): its transaction
 * is signed with at most `gasLimit` gas at at most `maxFeePerGas`, so `reservedWei` bounds what the
 * platform's deployer pays, whatever the chain does meanwhile. That bound counts in the chain's daily deploy
 * budget; on a mainnet its price (ETH/USD when queued, plus the paymaster's markup) is held against the
 * merchant's prepaid balance, and the actual cost is charged at that same price, so the charge never
 * exceeds the hold.
 */
export interface DeployChargeTerms {
  gasLimit: bigint;
  maxFeePerGas: bigint;
  reservedWei: bigint;
  /** Mainnets only: the maximum charge and what it is priced at. */
  prepaid?: DeployPrepaidTerms;
}

export interface DeployPrepaidTerms {
  /** USD per ETH with the feed's 8 decimals. */
  ethUsdAnswer: bigint;
  markupBps: number;
  /** The most the deploy can be charged, in micro-dollars (markup included). */
  maxChargeMicro: bigint;
}

/**
 * What `costWei` of deploy gas is charged at the price it was held at, in micro-dollars: the caller's rule
 * (yield/deployCharge.ts `deployChargeMicroUsd`), passed in.
 */
export type DeployCostCharge = (
  costWei: bigint,
  price: { ethUsdAnswer: bigint; markupBps: number },
) => bigint;

/** The hold of a deploy never ends by the clock: only its deploy's end settles or releases it. */
const DEPLOY_HOLD_EXPIRES_AT = new Date('9999-12-31T00:00:00Z');

export const yieldDeployChargeReference = (chargeId: string) => `yield-deploy:${chargeId}`;

export type ChargeRefusal =
  | { outcome: 'platform_budget' }
  /** The prepaid balance not held by signed operations or other deploys, in micro-dollars. */
  | { outcome: 'prepaid_balance'; availableMicro: bigint };

export interface DeployBudget {
  deploysPerDay: number;
  weiPerDay: bigint;
}

/**
 * Counts the deploy in its chain's day and, on a mainnet, holds its maximum charge against the merchant's
 * prepaid balance; then records the charge. Run it inside the queuing transaction: a refusal is answered
 * before anything is written here, but the caller must roll back what it took before.
 */
export async function reserveYieldDeployCharge(
  trx: Db,
  {
    deploymentId,
    merchantId,
    chainId,
    day,
    now,
    terms,
    budget,
  }: {
    deploymentId: string;
    merchantId: string;
    chainId: number;
    day: string;
    now: Date;
    terms: DeployChargeTerms;
    budget: DeployBudget;
  },
): Promise<ChargeRefusal | { outcome: 'reserved'; charge: YieldDeployChargeRow }> {
  if (terms.reservedWei > budget.weiPerDay) return { outcome: 'platform_budget' };
  // The counter row's lock serialises concurrent deploys on the chain; the WHERE refuses the one past either bound.
  const counted = await trx
    .insertInto('yield_deploy_budget_counters')
    .values({ chain_id: chainId, day, deploys: 1, wei: terms.reservedWei.toString() })
    .onConflict((conflict) =>
      conflict
        .columns(['chain_id', 'day'])
        .doUpdateSet({
          deploys: sql`yield_deploy_budget_counters.deploys + 1`,
          wei: sql`yield_deploy_budget_counters.wei + excluded.wei`,
        })
        .where('yield_deploy_budget_counters.deploys', '<', budget.deploysPerDay)
        .where(
          sql`yield_deploy_budget_counters.wei + excluded.wei`,
          '<=',
          sql`${budget.weiPerDay.toString()}::numeric`,
        ),
    )
    .returning('deploys')
    .executeTakeFirst();
  if (!counted) return { outcome: 'platform_budget' };

  let holdId: string | null = null;
  if (terms.prepaid) {
    holdId = randomUUID();
    const refused = await consumeSponsorshipLimits(
      trx,
      [
        {
          counter: prepaidReservationCounter(merchantId),
          amount: terms.prepaid.maxChargeMicro,
          limit: 0n,
          basis: 'reservation',
        },
      ],
      { holdId, expiresAt: DEPLOY_HOLD_EXPIRES_AT, now, merchantId },
    );
    if (refused !== undefined) {
      return {
        outcome: 'prepaid_balance',
        availableMicro: await availablePrepaidMicro(trx, merchantId, now),
      };
    }
  }

  const charge = await trx
    .insertInto('yield_deploy_charges')
    .values({
      deployment_id: deploymentId,
      merchant_id: merchantId,
      chain_id: chainId,
      day,
      gas_limit: terms.gasLimit,
      max_fee_per_gas: terms.maxFeePerGas.toString(),
      reserved_wei: terms.reservedWei.toString(),
      eth_usd_price: terms.prepaid ? feedAnswerToDecimal(terms.prepaid.ethUsdAnswer) : null,
      markup_bps: terms.prepaid?.markupBps ?? null,
      reserved_usd: terms.prepaid ? microUsdToFixed6(terms.prepaid.maxChargeMicro) : null,
      hold_id: holdId,
      status: 'held',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { outcome: 'reserved', charge };
}

/** The running balance less what signed operations and queued deploys hold (never below zero). */
async function availablePrepaidMicro(db: Db, merchantId: string, now: Date): Promise<bigint> {
  const [balance, [held]] = await Promise.all([
    prepaidBalanceUsd(db, merchantId),
    limitCountersUsage(db, [prepaidReservationCounter(merchantId)], now),
  ]);
  const available = (balance.startsWith('-') ? 0n : usdToMicro(balance)) - held!;
  return available > 0n ? available : 0n;
}

/**
 * The deployment's held charge (the deploy in flight; `lock`: its row locked, inside a transaction), or
 * undefined when it has none (settled, released, or queued before charges).
 */
export function findHeldDeployCharge(
  db: Db,
  deploymentId: string,
  { lock = false }: { lock?: boolean } = {},
): Promise<YieldDeployChargeRow | undefined> {
  const query = db
    .selectFrom('yield_deploy_charges')
    .selectAll()
    .where('deployment_id', '=', deploymentId)
    .where('status', '=', 'held');
  return (lock ? query.forUpdate() : query).executeTakeFirst();
}

/**
 * Ends the deployment's held charge at the deploy's actual cost (0 when nothing was mined): the day's budget
 * keeps that cost instead of the reservation (and gives back the deploy itself when `uncount`: it was never
 * started), the prepaid hold ends and the cost is debited through the ledger at the price it was held at.
 * One transaction; a second call finds nothing held and changes nothing.
 */
export async function settleYieldDeployCharge(
  db: Db,
  {
    deploymentId,
    costWei,
    txHash = null,
    chargeOf,
    uncount = false,
  }: {
    deploymentId: string;
    costWei: bigint;
    txHash?: string | null;
    chargeOf: DeployCostCharge;
    uncount?: boolean;
  },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const charge = await findHeldDeployCharge(trx, deploymentId, { lock: true });
    if (!charge) return;
    const reservedWei = BigInt(charge.reserved_wei);
    // The transaction was signed within the reservation; should a chain ever charge more, the platform pays it.
    const cost = costWei < reservedWei ? costWei : reservedWei;
    await trx
      .updateTable('yield_deploy_budget_counters')
      .set({
        deploys: sql`deploys - ${uncount ? 1 : 0}`,
        wei: sql`wei - ${(reservedWei - cost).toString()}::numeric`,
      })
      .where('chain_id', '=', charge.chain_id)
      .where('day', '=', charge.day)
      .execute();

    let chargedMicro: bigint | null = null;
    if (charge.hold_id !== null) {
      // A reservation hold just ends (its counter's `used` is untouched); the ledger debit is the charge.
      await settleLimitHold(trx, charge.hold_id, { costMicro: 0n, chargedMicro: 0n });
      chargedMicro = chargeOf(cost, {
        ethUsdAnswer: ethUsdDecimalToAnswer(charge.eth_usd_price!),
        markupBps: charge.markup_bps!,
      });
      if (chargedMicro > 0n) {
        await debitPrepaidBalance(trx, {
          merchantId: charge.merchant_id,
          amountUsd: microUsdToFixed6(chargedMicro),
          description: `Vault deploy: yield deployment ${deploymentId} on chain ${charge.chain_id}, transaction ${txHash}`,
          reference: yieldDeployChargeReference(charge.id),
        });
      } else chargedMicro = null;
    }
    await trx
      .updateTable('yield_deploy_charges')
      .set({
        status: cost > 0n ? 'settled' : 'released',
        cost_wei: cost.toString(),
        charged_usd: chargedMicro === null ? null : microUsdToFixed6(chargedMicro),
        tx_hash: txHash,
        settled_at: sql`now()`,
      })
      .where('id', '=', charge.id)
      .execute();
  });
}

/**
 * Ends the deployment's held charge with nothing mined (nothing was sent): settleYieldDeployCharge at no
 * cost, which charges nothing whatever the price. `uncount` gives back the deploy itself (never started).
 */
export async function releaseYieldDeployCharge(
  db: Db,
  { deploymentId, uncount = false }: { deploymentId: string; uncount?: boolean },
): Promise<void> {
  await settleYieldDeployCharge(db, { deploymentId, costWei: 0n, chargeOf: () => 0n, uncount });
}
