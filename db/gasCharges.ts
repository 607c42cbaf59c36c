import { sql, type Selectable } from 'kysely';
import { gasChargeMicroUsd } from '../money/gasPricing';
import { microUsdToFixed6 } from '../money/microUsd';
import { ethUsdDecimalToAnswer } from '../money/usdPriceAnswers';
import { weiToMicroUsd } from '../money/gasPricing';
import { networkByChainId } from '../config/networks';
import type { Db } from './client';
import { releaseLimitHolds, settleLimitHold } from './paymasterLimits';
import { recordUserOperationReceipt, type UserOperationReceipt } from './paymasterUsage';
import { debitPrepaidBalance } from './prepaidLedger';
import type { GasChargesTable } from './schema';

/**
 * Gas charges: what an included sponsored operation on a mainnet cost the merchant, debited from the
 * prepaid ledger. One charge per usage row (unique usage_id), whatever the receipt tracker rescans.
 * Testnet operations are never charged: testnet gas is not the merchant's money (a `pmc_test_` client
 * must not be able to spend the real balance).
 */

/** Whether included operations on this chain are charged to the prepaid ledger: mainnets only. */
export const chargedChain = (chainId: number): boolean => networkByChainId(chainId)?.testnet === false;
export type GasChargeRow = Selectable<GasChargesTable> & { client_label: string | null };

/** The ledger reference of a usage row's debit (unique per merchant, like the charge itself). */
export const gasChargeReference = (usageId: string) => `gas-charge:${usageId}`;

/**
 * The receipt tracker's step per UserOperationEvent, in one transaction: the usage row gets its receipt,
 * its sponsorship holds become the actual cost, and, when sponsored on a mainnet, its charge is debited —
 * so the status change, the limits and the debit become visible together.
 */
export async function recordReceiptAndCharge(
  db: Db,
  receipt: UserOperationReceipt,
  markupBps: number,
): Promise<{ recorded: number; charged: number }> {
  return db.transaction().execute(async (trx) => {
    const recorded = await recordUserOperationReceipt(trx, receipt);
    // Holds first: the counters (the prepaid reservation's included) are locked before the ledger's
    // balance row, in the order signing takes them.
    await settleIncludedOperationHolds(trx, { ...receipt, markupBps });
    const charged = await chargeIncludedOperation(trx, { ...receipt, markupBps });
    return { recorded, charged };
  });
}

/**
 * Replaces the sponsorship holds of the included operation with what it actually cost: the platform
 * budget and the merchant's share count the cost, the merchant, client and sender caps the cost plus
 * markup (as the charge computes it), and the prepaid reservation simply ends (the charge debits the
 * ledger). Settling deletes the holds, so a rescan settles nothing twice. Without a price snapshot the
 * holds are released. Run it inside the receipt's transaction.
 */
async function settleIncludedOperationHolds(
  trx: Db,
  {
    chainId,
    entryPoint,
    userOpHash,
    actualGasCost,
    markupBps,
  }: { chainId: number; entryPoint: string; userOpHash: string; actualGasCost: bigint; markupBps: number },
): Promise<void> {
  const rows = await trx
    .selectFrom('paymaster_usage')
    .select(['hold_id', 'eth_usd_price'])
    .where('chain_id', '=', chainId)
    .where('entry_point', '=', entryPoint.toLowerCase())
    .where('user_op_hash', '=', userOpHash.toLowerCase())
    .where('status', 'in', ['onchain_success', 'onchain_reverted'])
    .where('hold_id', 'is not', null)
    .execute();
  for (const { hold_id: holdId, eth_usd_price: price } of rows) {
    if (price === null) {
      await releaseLimitHolds(trx, [holdId!]);
      continue;
    }
    const ethUsdAnswer = ethUsdDecimalToAnswer(price);
    await settleLimitHold(trx, holdId!, {
      costMicro: weiToMicroUsd(actualGasCost, ethUsdAnswer),
      chargedMicro: gasChargeMicroUsd({ actualGasCostWei: actualGasCost, ethUsdAnswer, markupBps }),
    });
  }
}

/**
 * Charges the included sponsored operation(s) of (chain, entry point, userOpHash) that have no charge
 * yet; nothing on a testnet. Run it inside a transaction (`trx`): the charge row and its ledger debit are written together or
 * not at all, and the usage row lock plus the unique usage id make concurrent calls charge once.
 * A row without an ETH/USD snapshot gets an unpriced charge (figures kept, nothing debited).
 * Returns how many charges were written.
 */
export async function chargeIncludedOperation(
  trx: Db,
  {
    chainId,
    entryPoint,
    userOpHash,
    markupBps,
  }: { chainId: number; entryPoint: string; userOpHash: string; markupBps: number },
): Promise<number> {
  if (!chargedChain(chainId)) return 0;
  const uncharged = await trx
    .selectFrom('paymaster_usage')
    .select('id')
    .where('chain_id', '=', chainId)
    .where('user_op_hash', '=', userOpHash.toLowerCase())
    .where('entry_point', '=', entryPoint.toLowerCase())
    .where('mode', '=', 'sponsored')
    .where('status', 'in', ['onchain_success', 'onchain_reverted'])
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('gas_charges')
            .select('id')
            .whereRef('gas_charges.usage_id', '=', 'paymaster_usage.id'),
        ),
      ),
    )
    .execute();
  let charged = 0;
  for (const { id } of uncharged) {
    if (await chargeUsageRow(trx, id, markupBps)) charged += 1;
  }
  return charged;
}

async function chargeUsageRow(trx: Db, usageId: string, markupBps: number): Promise<boolean> {
  {
    const usage = await trx
      .selectFrom('paymaster_usage')
      .selectAll()
      .where('id', '=', usageId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (
      usage.mode !== 'sponsored' ||
      usage.chain_id === null ||
      !chargedChain(usage.chain_id) ||
      (usage.status !== 'onchain_success' && usage.status !== 'onchain_reverted') ||
      usage.actual_gas_cost === null ||
      usage.user_op_hash === null ||
      usage.tx_hash === null
    )
      return false;
    const amountMicro =
      usage.eth_usd_price === null
        ? null
        : gasChargeMicroUsd({
            actualGasCostWei: BigInt(usage.actual_gas_cost),
            ethUsdAnswer: ethUsdDecimalToAnswer(usage.eth_usd_price),
            markupBps,
          });
    const inserted = await trx
      .insertInto('gas_charges')
      .values({
        merchant_id: usage.merchant_id,
        usage_id: usage.id,
        client_id: usage.client_id,
        chain_id: usage.chain_id,
        user_op_hash: usage.user_op_hash,
        tx_hash: usage.tx_hash,
        operation_status: usage.status,
        actual_gas_cost_wei: usage.actual_gas_cost,
        eth_usd_price: usage.eth_usd_price,
        markup_bps: markupBps,
        amount_usd: amountMicro === null ? null : microUsdToFixed6(amountMicro),
      })
      .onConflict((oc) => oc.column('usage_id').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) return false;
    // The ledger refuses a zero entry; a zero-cost operation owes nothing.
    if (amountMicro !== null && amountMicro > 0n) {
      await debitPrepaidBalance(trx, {
        merchantId: usage.merchant_id,
        amountUsd: microUsdToFixed6(amountMicro),
        description: `Gas: user operation ${usage.user_op_hash} on chain ${usage.chain_id}`,
        reference: gasChargeReference(usage.id),
      });
    }
    return true;
  }
}

const chargesWithLabel = (db: Db, merchantId: string) =>
  db
    .selectFrom('gas_charges')
    .leftJoin('paymaster_clients', (join) =>
      join
        .onRef('paymaster_clients.client_id', '=', 'gas_charges.client_id')
        .onRef('paymaster_clients.merchant_id', '=', 'gas_charges.merchant_id'),
    )
    .selectAll('gas_charges')
    .select('paymaster_clients.label as client_label')
    .where('gas_charges.merchant_id', '=', merchantId);

/** The merchant's charges, newest first; `hasMore` tells whether another page follows. */
export async function listGasCharges(
  db: Db,
  filter: { merchantId: string; chainId?: number; beforeSeq?: string; limit: number },
): Promise<{ rows: GasChargeRow[]; hasMore: boolean }> {
  let query = chargesWithLabel(db, filter.merchantId);
  if (filter.chainId !== undefined) query = query.where('gas_charges.chain_id', '=', filter.chainId);
  if (filter.beforeSeq !== undefined) query = query.where('gas_charges.seq', '<', filter.beforeSeq as never);
  const rows = await query
    .orderBy('gas_charges.seq', 'desc')
    .limit(filter.limit + 1)
    .execute();
  return { rows: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
}

/**
 * The merchant's charges created in [from, toExclusive), oldest first, in pages of `pageSize` read by
 * keyset (`seq`): a caller streams any range in bounded memory. A charge recorded while the pages are
 * read appears if its `seq` is after the page being read, like a later page of a listing.
 */
export async function* gasChargesBetween(
  db: Db,
  filter: { merchantId: string; from: Date; toExclusive: Date; chainId?: number },
  pageSize = 1_000,
): AsyncGenerator<GasChargeRow[]> {
  let afterSeq: string | undefined;
  for (;;) {
    let query = chargesWithLabel(db, filter.merchantId)
      .where('gas_charges.created_at', '>=', filter.from)
      .where('gas_charges.created_at', '<', filter.toExclusive);
    if (filter.chainId !== undefined) query = query.where('gas_charges.chain_id', '=', filter.chainId);
    if (afterSeq !== undefined) query = query.where('gas_charges.seq', '>', afterSeq as never);
    const rows = await query.orderBy('gas_charges.seq', 'asc').limit(pageSize).execute();
    if (rows.length > 0) yield rows;
    if (rows.length < pageSize) return;
    afterSeq = String(rows.at(-1)!.seq);
  }
}

/** Sum (numeric(20,6) string) and count of the merchant's charges created in [from, toExclusive). */
export async function gasChargeTotals(
  db: Db,
  { merchantId, from, toExclusive }: { merchantId: string; from: Date; toExclusive: Date },
): Promise<{ chargesUsd: string; operations: number }> {
  const row = await db
    .selectFrom('gas_charges')
    .select([
      sql<string>`coalesce(sum(amount_usd), 0)::numeric(20, 6)::text`.as('charges_usd'),
      sql<string>`count(*)`.as('operations'),
    ])
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', from)
    .where('created_at', '<', toExclusive)
    .executeTakeFirstOrThrow();
  return { chargesUsd: row.charges_usd, operations: Number(row.operations) };
}
