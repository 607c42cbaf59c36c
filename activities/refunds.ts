import { randomUUID } from 'node:crypto';
import type { Address, Hex } from 'viem';
import type { NetworkRegistry } from '../chain/networkRegistry';
import type { PublicClients } from '../chain/publicClients';
import { checkRefundTransfer } from '../chain/refundTransfers';
import type { Db } from '../db/client';
import { insertRefundEventOnce } from '../db/events';
import { finishRefund, findRefundById, type RefundRow } from '../db/refunds';
import type { RefundStatus } from '../db/refundStatus';
import { effectiveStatus, findSessionById } from '../db/sessions';
import { newEventId, serialiseRefundEvent } from '../webhooks/events';
import { toRefundModel } from '../webhooks/refundObject';
import { eventSessionOf } from '../webhooks/sessionLifecycleEvents';

/**
 * What the refund workflow (workflows/refund.ts) asks of the world: where its refund stands, and for a
 * processing one with its transaction whether the transfer is confirmed on chain (then it succeeds) or no
 * longer stands (then it fails), each with its event stored in the same transaction as the status.
 */
export interface RefundActivityDependencies {
  db: Db;
  networks: NetworkRegistry;
  publicClients: PublicClients;
}

export interface RefundStep {
  status: RefundStatus;
  /** A merchant-paid refund waiting for its transaction's confirmations: look again after a while. */
  awaitingConfirmations?: boolean;
  /** The event the step stored (`refund.succeeded` / `refund.failed`), to be delivered. */
  eventId?: string;
}

async function storeRefundEvent(trx: Db, row: RefundRow): Promise<{ id: string }> {
  const session = (await findSessionById(trx, row.session_id))!;
  const status = effectiveStatus(session, new Date());
  const id = newEventId(randomUUID());
  const createdAt = new Date();
  const type = row.status === 'succeeded' ? 'refund.succeeded' : 'refund.failed';
  const payload = serialiseRefundEvent({
    id,
    type,
    createdAt: createdAt.toISOString(),
    data: {
      refund: toRefundModel(row),
      session: eventSessionOf(session, status === 'pending' ? 'awaiting_payment' : status),
    },
  });
  return insertRefundEventOnce(trx, {
    id,
    type,
    merchantId: row.merchant_id,
    sessionId: row.session_id,
    refundId: row.id,
    payload,
    createdAt,
  });
}

export function createRefundActivities({ db, networks, publicClients }: RefundActivityDependencies) {
  return {
    /**
     * Advances the refund as far as the world allows: a processing refund whose transfer has its chain's
     * confirmations succeeds; one whose receipt now says otherwise (reverted, or not that transfer) fails. A
     * receipt not found keeps it processing: after a reorg the transaction is usually mined again.
     */
    async advanceRefund({ refundId }: { refundId: string }): Promise<RefundStep> {
      const row = await findRefundById(db, refundId);
      if (!row) return { status: 'canceled' };
      // Either source: a relayed forwarder refund's transaction holds the same Transfer (forwarder → address).
      if (row.status !== 'processing' || !row.tx_hash) return { status: row.status };
      const chainId = row.chain_id!;
      const client = publicClients.forChain(chainId);
      const network = networks.byChainId(chainId);
      if (!client || !network) throw new Error(`no RPC for chain ${chainId}`);
      const check = await checkRefundTransfer(client, {
        txHash: row.tx_hash! as Hex,
        token: row.token_address! as Address,
        to: row.address! as Address,
        amount: BigInt(row.amount_units!),
      });
      if (!check.found && !check.mined) return { status: 'processing', awaitingConfirmations: true };
      if (check.found && check.confirmations < BigInt(network.confirmations))
        return { status: 'processing', awaitingConfirmations: true };
      const finished = await finishRefund(
        db,
        check.found
          ? { refundId, outcome: 'succeeded', now: new Date() }
          : { refundId, outcome: 'failed', failureReason: check.reason, now: new Date() },
        storeRefundEvent,
      );
      if (!finished) return { status: (await findRefundById(db, refundId))!.status };
      return { status: finished.row.status, eventId: finished.eventId };
    },
  };
}

export type RefundActivities = ReturnType<typeof createRefundActivities>;
