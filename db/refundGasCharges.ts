import { gasChargeMicroUsd } from '../money/gasPricing';
import { microUsdToFixed6 } from '../money/microUsd';
import { ethUsdDecimalToAnswer } from '../money/usdPriceAnswers';
import type { Db } from './client';
import { debitPrepaidBalance } from './prepaidLedger';
import type { RefundRow } from './refunds';

/**
 * The gas of a relayed forwarder refund (docs/decisions.md "Forwarder refunds: authorization, relay and gas"): the operator
 * pays it; on a mainnet it is debited from the merchant's prepaid balance like a sponsored operation's gas —
 * actual cost × the ETH/USD price fixed at authorization × (1 + the paymaster's markup), rounded up once —
 * with ledger reference `refund-gas:<refundId>`, so it is charged once however often the step runs.
 */
export const refundGasReference = (refundId: string) => `refund-gas:${refundId}`;

/**
 * Stores what the relay cost and, when the refund was priced (a mainnet), debits it. Run it in the
 * transaction that ends the refund; a second call changes nothing.
 */
export async function recordRefundRelayGas(trx: Db, row: RefundRow, gasWei: bigint): Promise<void> {
  await trx
    .updateTable('refunds')
    .set({ relay_gas_wei: gasWei.toString() })
    .where('id', '=', row.id)
    .where('relay_gas_wei', 'is', null)
    .execute();
  if (row.relay_eth_usd_price === null || row.relay_markup_bps === null) return;
  const charged = await trx
    .selectFrom('prepaid_ledger_entries')
    .select('id')
    .where('merchant_id', '=', row.merchant_id)
    .where('reference', '=', refundGasReference(row.id))
    .executeTakeFirst();
  if (charged) return;
  const micro = gasChargeMicroUsd({
    actualGasCostWei: gasWei,
    ethUsdAnswer: ethUsdDecimalToAnswer(row.relay_eth_usd_price),
    markupBps: row.relay_markup_bps,
  });
  if (micro === 0n) return;
  await debitPrepaidBalance(trx, {
    merchantId: row.merchant_id,
    amountUsd: microUsdToFixed6(micro),
    description: `Refund relay gas (refund ${row.id}, tx ${row.tx_hash})`,
    reference: refundGasReference(row.id),
  });
}
