import { getAddress, type Address } from 'viem';
import type { NetworkRegistry } from '../chain/networkRegistry';
import type { StablecoinSymbol } from '../chain/stablecoins';
import type { Db } from '../db/client';
import { insertPaymentSession } from '../db/paymentSessionCreation';
import { openPeriodCharge, type SubscriptionChargeRow } from '../db/subscriptionCharges';
import type { SubscriptionPlanRow } from '../db/subscriptionPlans';
import type { SubscriptionRow } from '../db/subscriptions';
import { findSessionById, listPaymentOptions, type SessionRow } from '../db/sessions';
import { normaliseDecimal } from '../money/baseUnits';
import { nameBasedUuid } from './nameBasedIds';

/**
 * A period's invoice and its charge row (issue 42), written together: the period's payment session (with
 * `subscription_id`, one payment option — the subscription's chain and token —, the plan as its line) and
 * the charge row keyed by (subscription, period index). The session's id is made from the subscription and
 * the period, so opening the period again — a retried activity, a worker restarted — finds both rows and
 * writes nothing: one session and one charge per period, whoever opens it.
 */

export const periodSessionId = (subscriptionId: string, periodIndex: number) =>
  nameBasedUuid(`period-session:${subscriptionId}:${periodIndex}`);

export interface OpenedPeriod {
  session: SessionRow;
  charge: SubscriptionChargeRow;
  /**
   * This call wrote the charge row (no earlier attempt opened the period, so none can have redeemed it:
   * every attempt opens the period before it sends).
   */
  openedNow: boolean;
  /** Where the period's amount is redeemed to: the session's deposit address on the subscription's chain. */
  depositAddress: Address;
}

export async function openPeriod(
  db: Db,
  networks: Pick<NetworkRegistry, 'paymentNetworks'>,
  {
    subscription,
    plan,
    periodIndex,
    sandboxMode,
    expiresAt,
    now,
    fromBlock,
  }: {
    subscription: SubscriptionRow;
    plan: SubscriptionPlanRow;
    periodIndex: number;
    sandboxMode: boolean;
    expiresAt: Date;
    now: Date;
    fromBlock: bigint;
  },
): Promise<OpenedPeriod> {
  const sessionId = periodSessionId(subscription.id, periodIndex);
  const amount = normaliseDecimal(plan.amount);
  const { session, charge, openedNow } = await db.transaction().execute(async (trx) => {
    const session =
      (await findSessionById(trx, sessionId)) ??
      (await insertPaymentSession(
        trx,
        {
          paymentNetworks: (sandbox) =>
            networks.paymentNetworks(sandbox).filter((network) => network.chainId === subscription.chain_id),
        },
        {
          id: sessionId,
          merchantId: subscription.merchant_id,
          fields: {
            amount,
            lineItems: [{ name: plan.name, quantity: 1, unitPrice: amount, total: amount }],
            paymentOptionSymbols: [subscription.token_symbol as StablecoinSymbol],
            sandboxMode,
          },
          expiresAt,
          now,
          subscriptionId: subscription.id,
        },
      ));
    const { charge, opened } = await openPeriodCharge(trx, {
      subscriptionId: subscription.id,
      periodIndex,
      sessionId,
      fromBlock,
    });
    return { session, charge, openedNow: opened };
  });
  const option = (await listPaymentOptions(db, session.id)).find(
    (candidate) =>
      candidate.chain_id === subscription.chain_id && candidate.symbol === subscription.token_symbol,
  );
  if (!option)
    throw new Error(
      `period session ${session.id} has no ${subscription.token_symbol} option on chain ${subscription.chain_id}`,
    );
  return { session, charge, openedNow, depositAddress: getAddress(option.deposit_address) };
}
