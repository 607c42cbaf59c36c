import type { Address, Hex } from 'viem';
import { checkRefundTransfer } from '../../chain/refundTransfers';
import { findMerchantRefund, findRefundPaidBy, markRefundProcessing } from '../../db/refunds';
import { toRefundModel, type RefundModel } from '../../webhooks/refundObject';
import type { AppContext } from '../appContext';
import { conflict, invalidField, notFound, serviceUnavailable } from '../httpErrors';
import { wakeRefundWorkflow } from './refundWorkflowSignals';

/**
 * `POST …/refunds/{refundId}/transaction { txHash }`: a merchant-paid refund's transaction, verified on the
 * refund's chain before anything is stored (its receipt holds a Transfer of exactly the refund's token, to
 * exactly its address, of exactly its amount; docs/decisions.md "Refunds: merchant-paid"). The refund becomes
 * `processing`; its workflow waits for the chain's confirmations and makes it `succeeded`.
 */
export async function reportRefundTransaction(
  app: AppContext,
  ids: { merchantId: string; sessionId: string; refundId: string },
  txHash: string,
): Promise<{ status: number; body: RefundModel }> {
  const refund = await findMerchantRefund(app.db, ids);
  if (!refund) throw notFound('Refund not found');
  if (refund.source !== 'merchant')
    throw conflict('Refund is paid from the forwarder on the payout address’s authorization, not reported');
  if (refund.status === 'processing' && refund.tx_hash === txHash.toLowerCase())
    return { status: 200, body: toRefundModel(refund) };
  if (refund.status !== 'awaiting_payment')
    throw conflict(`Refund is ${refund.status}: it takes no transaction`);
  const chainId = refund.chain_id!;
  const other = await findRefundPaidBy(app.db, { chainId, txHash });
  if (other) throw conflict('Transaction already pays another refund');
  const client = app.publicClients.forChain(chainId);
  if (!client) throw serviceUnavailable(`No RPC for chain ${chainId}`);
  const check = await checkRefundTransfer(client, {
    txHash: txHash as Hex,
    token: refund.token_address! as Address,
    to: refund.address! as Address,
    amount: BigInt(refund.amount_units!),
  });
  if (!check.found) throw invalidField('txHash', check.reason);
  const processing = await markRefundProcessing(app.db, { refundId: refund.id, txHash, now: app.now() });
  if (!processing) {
    const now = await findMerchantRefund(app.db, ids);
    if (now?.tx_hash === txHash.toLowerCase()) return { status: 200, body: toRefundModel(now) };
    throw conflict(
      now?.status === 'awaiting_payment'
        ? 'Transaction already pays another refund'
        : `Refund is ${now?.status}: it takes no transaction`,
    );
  }
  await wakeRefundWorkflow(app, { refundId: refund.id, merchantId: ids.merchantId });
  return { status: 200, body: toRefundModel(processing) };
}
