import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { insertSubscription, type SubscriptionRow } from '../../db/subscriptions';
import type { TestApp } from '../harness/app';

/**
 * Sessions with money in them, and subscriptions, for the clients of the refund and subscription routes
 * (the tool server, the SDK): written as the deposit monitor, the settlement and the subscribe route leave
 * them, so a test of a client needs no chain. The chain flows are in merchantPaidRefund.test.ts and the
 * subscription charging tests.
 */

let block = 1_000;
const hash = () => `0x${randomBytes(32).toString('hex')}`;

/** A USDC transfer of `units` to the session's deposit address, as the deposit monitor records it. */
async function recordDeposit(app: TestApp, sessionId: string, units: bigint) {
  const read = await app.request(`/v1/sessions/${sessionId}`);
  const usdc = read.body.paymentOptions[0] as {
    chainId: number;
    tokenAddress: string;
    depositAddress: string;
  };
  await app.db
    .insertInto('deposits')
    .values({
      session_id: sessionId,
      chain_id: usdc.chainId,
      token_address: usdc.tokenAddress.toLowerCase(),
      deposit_address: usdc.depositAddress.toLowerCase(),
      amount: units.toString(),
      tx_hash: hash(),
      log_index: 0,
      block_number: BigInt((block += 1)),
      kind: 'accepted',
    })
    .execute();
  return usdc;
}

/**
 * A USDC session of `amount` USD, created with the merchant's token, paid `paidUnits` (6 decimals) and
 * swept to the payout address: refunds of it are merchant-paid.
 */
export async function completedSession(
  app: TestApp,
  auth: { authorization: string },
  { amount, paidUnits }: { amount: string; paidUnits: bigint },
): Promise<{ id: string; chainId: number }> {
  const created = await app.request('/v1/merchants/me/sessions', {
    method: 'POST',
    headers: auth,
    json: { amount, sandboxMode: true, paymentOptionSymbols: ['USDC'] },
  });
  if (created.status !== 201) throw new Error(`session not created: ${created.text}`);
  const usdc = await recordDeposit(app, created.body.id, paidUnits);
  await sql`update deposits set settled_at = now() where session_id = ${created.body.id}`.execute(app.db);
  await sql`update sessions set status = 'completed', paid_chain_id = ${usdc.chainId},
    settled_amount = ${amount} where id = ${created.body.id}`.execute(app.db);
  return { id: created.body.id, chainId: usdc.chainId };
}

/** An active subscription of the merchant's plan, as the subscribe route stores it. */
export async function storedSubscription(
  app: TestApp,
  { merchantId, planId, customerAccount }: { merchantId: string; planId: string; customerAccount: string },
): Promise<SubscriptionRow> {
  const row = await insertSubscription(app.db, {
    id: randomUUID(),
    merchantId,
    planId,
    status: 'active',
    customerAccount,
    chainId: 84532,
    tokenSymbol: 'USDC',
    tokenAddress: '0x00000000000000000000000000000000000000a1',
    periodAmount: 10_000_000n,
    periodSeconds: 30 * 86_400,
    delegationJson: '{}',
    delegationHash: hash(),
    currentPeriodStart: new Date('2026-12-01T00:00:00Z'),
    currentPeriodEnd: new Date('2026-12-31T00:00:00Z'),
  });
  return row!;
}
