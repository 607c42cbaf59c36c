import type { Selectable } from 'kysely';
import { gasChargeMicroUsd } from '../money/gasPricing';
import { microUsdToFixed6 } from '../money/microUsd';
import { feedAnswerToDecimal } from '../money/usdPriceAnswers';
import type { Db } from './client';
import { chargedChain } from './gasCharges';
import { debitPrepaidBalance } from './prepaidLedger';
import type { SubscriptionGasChargesTable } from './schema';

/**
 * The gas of a period charge's redemption, billed to the merchant's prepaid balance (issue 42: "gas
 * sponsored by the platform and billed to the merchant's prepaid balance"), priced like a sponsored
 * operation's gas (money/gasPricing.ts: cost × ETH/USD plus the paymaster's markup, rounded up). Mainnets
 * only, as gas_charges: testnet gas is not the merchant's money. One charge per period charge, its row and
 * its ledger debit written together; without a price the charge is kept unpriced and nothing is debited.
 */
export type SubscriptionGasChargeRow = Selectable<SubscriptionGasChargesTable>;

export const subscriptionGasReference = (subscriptionChargeId: string) =>
  `subscription-gas:${subscriptionChargeId}`;

export interface RedemptionGas {
  merchantId: string;
  subscriptionChargeId: string;
  chainId: number;
  txHash: string;
  /** The redemption's gas used × its effective gas price. */
  gasCostWei: bigint;
  markupBps: number;
  /** USD per ETH, 8 decimals; undefined when the chain's feed gave no fresh price. */
  ethUsdAnswer: bigint | undefined;
}

export type RedemptionGasOutcome =
  | { kind: 'not_charged_testnet' }
  | { kind: 'already_billed' }
  | { kind: 'billed'; charge: SubscriptionGasChargeRow };

export async function billRedemptionGas(db: Db, gas: RedemptionGas): Promise<RedemptionGasOutcome> {
  if (!chargedChain(gas.chainId)) return { kind: 'not_charged_testnet' };
  const amountMicro =
    gas.ethUsdAnswer === undefined
      ? null
      : gasChargeMicroUsd({
          actualGasCostWei: gas.gasCostWei,
          ethUsdAnswer: gas.ethUsdAnswer,
          markupBps: gas.markupBps,
        });
  return db.transaction().execute(async (trx) => {
    const charge = await trx
      .insertInto('subscription_gas_charges')
      .values({
        merchant_id: gas.merchantId,
        subscription_charge_id: gas.subscriptionChargeId,
        chain_id: gas.chainId,
        tx_hash: gas.txHash,
        gas_cost_wei: gas.gasCostWei.toString(),
        eth_usd_price: gas.ethUsdAnswer === undefined ? null : feedAnswerToDecimal(gas.ethUsdAnswer),
        markup_bps: gas.markupBps,
        amount_usd: amountMicro === null ? null : microUsdToFixed6(amountMicro),
      })
      .onConflict((conflict) => conflict.column('subscription_charge_id').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!charge) return { kind: 'already_billed' as const };
    // The ledger refuses a zero entry; a zero-cost redemption owes nothing.
    if (amountMicro !== null && amountMicro > 0n) {
      await debitPrepaidBalance(trx, {
        merchantId: gas.merchantId,
        amountUsd: microUsdToFixed6(amountMicro),
        description: `Gas: subscription charge ${gas.txHash} on chain ${gas.chainId}`,
        reference: subscriptionGasReference(gas.subscriptionChargeId),
      });
    }
    return { kind: 'billed' as const, charge };
  });
}
