import { randomUUID } from 'node:crypto';
import type { Address, Hex } from 'viem';
import type { NetworkRegistry } from '../chain/networkRegistry';
import type { OperatorChains } from '../chain/operatorChains';
import type { PublicClients } from '../chain/publicClients';
import { checkRefundTransfer } from '../chain/refundTransfers';
import type { Db } from '../db/client';
import { insertRefundEventOnce } from '../db/events';
import { recordRefundRelayGas } from '../db/refundGasCharges';
import { finishRefund, findRefundById, type RefundRow } from '../db/refunds';
import type { RefundStatus } from '../db/refundStatus';
import { effectiveStatus, findSessionById } from '../db/sessions';
import { newEventId, serialiseRefundEvent } from '../webhooks/events';
import { toRefundModel } from '../webhooks/refundObject';
import { eventSessionOf } from '../webhooks/sessionLifecycleEvents';
import { bringRecordedRelayToChain, relayAuthorizedRefund } from './forwarderRefundRelay';
import { settlementStepContext, type SettlementStepContext } from './settlementSteps';

/**
 * What the refund workflow (workflows/refund.ts) asks of the world: where its refund stands, and for a
 * processing one with its transaction whether the transfer is confirmed on chain (then it succeeds) or no
 * longer stands (then it fails), each with its event stored in the same transaction as the status.
 */
export interface RefundActivityDependencies {
  db: Db;
  networks: NetworkRegistry;
  publicClients: PublicClients;
  /** The operator key that relays forwarder refunds (and deploys a forwarder first when it has no code). */
  operator: OperatorChains;
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

/**
 * A processing forwarder refund before its transfer can be read: relayed when nothing is recorded yet (or the
 * recorded relay was dropped), its recorded relay brought to the chain otherwise. Answers the step to return
 * while the relay is not mined, or undefined once it is (then its transfer is checked like any refund's).
 */
async function relayStep(
  context: SettlementStepContext,
  row: RefundRow,
): Promise<RefundStep | { refused: string } | undefined> {
  if (row.tx_hash) {
    const state = await bringRecordedRelayToChain(context, row);
    return state === 'mined' ? undefined : { status: 'processing', awaitingConfirmations: true };
  }
  const relayed = await relayAuthorizedRefund(context, row);
  if (!relayed.sent) return { refused: relayed.reason };
  return { status: 'processing', awaitingConfirmations: true };
}

export function createRefundActivities({
  db,
  networks,
  publicClients,
  operator,
}: RefundActivityDependencies) {
  const settlement = settlementStepContext({ db, operator });
  /** Ends the refund with its event, and for a relayed forwarder refund its gas, in one transaction. */
  const finish = async (
    row: RefundRow,
    outcome: { outcome: 'succeeded' } | { outcome: 'failed'; failureReason: string },
  ): Promise<RefundStep> => {
    const chainId = row.chain_id!;
    const receipt =
      row.source === 'forwarder' && row.tx_hash
        ? await publicClients
            .forChain(chainId)!
            .getTransactionReceipt({ hash: row.tx_hash as Hex })
            .catch(() => undefined)
        : undefined;
    const finished = await finishRefund(
      db,
      { refundId: row.id, ...outcome, now: new Date() },
      async (trx, ended) => {
        if (receipt) await recordRefundRelayGas(trx, ended, receipt.gasUsed * receipt.effectiveGasPrice);
        return storeRefundEvent(trx, ended);
      },
    );
    if (!finished) return { status: (await findRefundById(db, row.id))!.status };
    return { status: finished.row.status, eventId: finished.eventId };
  };
  return {
    /**
     * Advances the refund as far as the world allows: a processing refund whose transfer has its chain's
     * confirmations succeeds; one whose receipt now says otherwise (reverted, or not that transfer) fails. A
     * receipt not found keeps it processing: after a reorg the transaction is usually mined again.
     */
    async advanceRefund({ refundId }: { refundId: string }): Promise<RefundStep> {
      let row = await findRefundById(db, refundId);
      if (!row) return { status: 'canceled' };
      if (row.status === 'processing' && row.source === 'forwarder') {
        const relay = await relayStep(settlement, row);
        // Nothing was sent: the amount is refundable again (from the merchant's wallet if the money left).
        if (relay && 'refused' in relay)
          return finish(row, { outcome: 'failed', failureReason: relay.refused });
        if (relay) return relay;
        row = (await findRefundById(db, refundId))!;
      }
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
      return finish(
        row,
        check.found ? { outcome: 'succeeded' } : { outcome: 'failed', failureReason: check.reason },
      );
    },
  };
}

export type RefundActivities = ReturnType<typeof createRefundActivities>;
