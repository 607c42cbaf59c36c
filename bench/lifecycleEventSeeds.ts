import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../db/client';
import { findLatestSessionEventOfType } from '../db/sessionEvents';
import { serialiseSessionLifecycleEvent } from '../webhooks/sessionLifecycleEvents';
import {
  completeSession,
  expireSession,
  failSession,
  insertSessionWithOptions,
  recordSessionDeposit,
} from '../db/sessions';

/**
 * The webhook bench's session lifecycle events, each made by its real status change (db/sessions.ts), so
 * the event's created_at is the moment of that change: expired (no deposit), underpaid (a partial
 * deposit), failed (a confirming session's settlement failed), completed (its flush covers the amount).
 */
export const LIFECYCLE_EVENT_TYPES = [
  'session.completed',
  'session.expired',
  'session.underpaid',
  'session.failed',
] as const;
export type LifecycleEventType = (typeof LIFECYCLE_EVENT_TYPES)[number];

const TOKEN = '0x00000000000000000000000000000000000000aa';
const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;

/** A session of the merchant payable with 5 units of a 6-decimals token, before its status change. */
export async function seedLifecycleSession(
  db: Db,
  { merchantId, wallet, type }: { merchantId: string; wallet: string; type: LifecycleEventType },
): Promise<string> {
  const id = randomUUID();
  await insertSessionWithOptions(
    db,
    {
      id,
      merchant_id: merchantId,
      amount: '5',
      merchant_name: 'Bench Shop',
      line_items: '[]',
      payment_option_symbols: ['USDC'],
      sandbox_mode: true,
      success_url: null,
      payout_address: wallet,
      expires_at: new Date(Date.now() + 3600_000),
    },
    [
      {
        chain_id: 84532,
        network: 'base-sepolia',
        symbol: 'USDC',
        token_address: TOKEN,
        decimals: 6,
        amount: '5000000',
        deposit_address: hex(20),
        payout_address: wallet,
      },
    ],
  );
  if (type === 'session.underpaid') await insertDeposit(db, id, '1000000');
  if (type === 'session.failed' || type === 'session.completed')
    await recordSessionDeposit(db, { id, txHash: hex(32), chainId: 84532, paidAt: new Date() });
  if (type === 'session.completed')
    await db
      .insertInto('settlements')
      .values({
        session_id: id,
        chain_id: 84532,
        token_address: TOKEN,
        forwarder_address: hex(20),
        flush_tx_hash: hex(32),
        amount_in: '5000000',
        usde_amount: '5000000000000000000',
        bridged: false,
        shares: '4900000000000000000',
        delivered_usde: '5000000000000000000',
        delivered_at: new Date(),
        delivery_chain_id: 84532,
        delivery_tx_hash: hex(32),
      })
      .execute();
  return id;
}

async function insertDeposit(db: Db, sessionId: string, amount: string) {
  await db
    .insertInto('deposits')
    .values({
      session_id: sessionId,
      chain_id: 84532,
      token_address: TOKEN,
      deposit_address: hex(20),
      amount,
      tx_hash: hex(32),
      log_index: 0,
      block_number: '1',
      kind: 'accepted',
    })
    .execute();
}

/** Makes the status change (its event stored in the same transaction) and answers the event's id. */
export async function changeSessionStatus(
  db: Db,
  sessionId: string,
  type: LifecycleEventType,
): Promise<string> {
  if (type === 'session.completed') await completeSession(db, sessionId, serialiseSessionLifecycleEvent);
  else if (type === 'session.failed')
    await failSession(db, { id: sessionId, reason: 'bench: reverted' }, serialiseSessionLifecycleEvent);
  else await expireSession(db, sessionId, serialiseSessionLifecycleEvent);
  const event = await findLatestSessionEventOfType(db, sessionId, [type]);
  if (!event) throw new Error(`no ${type} event for session ${sessionId}`);
  return event.id;
}
