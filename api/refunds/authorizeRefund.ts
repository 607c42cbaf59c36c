import { erc20Abi, getAddress, type Address, type Hex } from 'viem';
import { getCode, readContract } from 'viem/actions';
import { isForwarderRefundIdUsed, verifyForwarderRefundSignature } from '../../chain/forwarderRefunds';
import type { Db } from '../../db/client';
import { chargedChain } from '../../db/gasCharges';
import { feedAnswerToDecimal } from '../../money/usdPriceAnswers';
import {
  findMerchantRefund,
  lockMerchantSession,
  markRefundAuthorized,
  unrelayedForwarderRefundUnits,
} from '../../db/refunds';
import { hasFlushInFlight } from '../../db/settlements';
import { forwarderRefundOf, toRefundModel, type RefundModel } from '../../webhooks/refundObject';
import type { AppContext } from '../appContext';
import { conflict, invalidField, notFound, serviceUnavailable } from '../httpErrors';
import { wakeRefundWorkflow } from './refundWorkflowSignals';

/**
 * `POST …/refunds/{refundId}/authorize { signature }`: the payout address's EIP-712 authorization of a
 * forwarder refund (docs/service-contract.md "Refunds"). Checked exactly as the forwarder will check it
 * (chain/forwarderRefunds.ts verifyForwarderRefundSignature: ECDSA, or ERC-1271 of a payout contract) before
 * anything is stored: a bad signature is 400 `signature` and nothing changes. Then, under the session's row
 * lock (the lock a flush of the session takes before it sweeps; docs/operations.md "Forwarder refunds and
 * sweeps"), the forwarder must still hold the refund besides every authorized refund not relayed yet, and
 * no flush may be in flight; the refund becomes `processing` and its workflow relays it.
 */

/**
 * On a mainnet the relay's gas is charged to the prepaid balance like other platform gas, at the ETH/USD price
 * of now with the paymaster's markup (docs/decisions.md "Forwarder refunds: authorization, relay and gas"); without a fresh
 * price nothing is authorized (503). Testnet gas is not the merchant's money: no pricing.
 */
async function relayGasPricing(
  app: AppContext,
  chainId: number,
): Promise<{ ethUsdPrice: string; markupBps: number } | undefined> {
  if (!chargedChain(chainId)) return undefined;
  const price = await app.ethUsdPrices.fresh(chainId);
  if (!price)
    throw serviceUnavailable(
      `No fresh ETH/USD price on chain ${chainId} to charge the refund's gas at; nothing was authorized, retry shortly`,
    );
  return { ethUsdPrice: feedAnswerToDecimal(price.answer), markupBps: app.config.PAYMASTER_MARKUP_BPS };
}

export async function authorizeRefund(
  app: AppContext,
  ids: { merchantId: string; sessionId: string; refundId: string },
  signature: Hex,
): Promise<{ status: number; body: RefundModel }> {
  const refund = await findMerchantRefund(app.db, ids);
  if (!refund) throw notFound('Refund not found');
  if (refund.source !== 'forwarder')
    throw conflict('Refund is paid from the merchant’s wallet: report its transaction instead');
  if (refund.status !== 'awaiting_authorization')
    throw conflict(`Refund is ${refund.status}: it takes no authorization`);
  const client = app.publicClients.forChain(refund.chain_id!);
  if (!client) throw serviceUnavailable(`No RPC for chain ${refund.chain_id}`);
  const forwarderRefund = forwarderRefundOf(refund);
  const check = await verifyForwarderRefundSignature(client, {
    refund: forwarderRefund,
    merchant: getAddress(refund.payout_address!),
    signature,
  });
  if (!check.valid) throw invalidField('signature', check.reason);
  const code = await getCode(client, { address: forwarderRefund.forwarder });
  if (code && code !== '0x' && (await isForwarderRefundIdUsed(client, forwarderRefund)))
    throw conflict('This refund was already paid by the forwarder');

  const gasPricing = await relayGasPricing(app, refund.chain_id!);
  const authorized = await app.db.transaction().execute(async (trx: Db) => {
    if (!(await lockMerchantSession(trx, ids.merchantId, ids.sessionId))) throw notFound('Refund not found');
    if (
      await hasFlushInFlight(trx, {
        sessionId: ids.sessionId,
        chainId: forwarderRefund.chainId,
        tokenAddress: forwarderRefund.token,
      })
    )
      throw conflict('A sweep of this forwarder is in flight; its funds are no longer refundable from it');
    // The pending block: a refund relayed but not mined has already left what may be promised.
    const balance = await readContract(client, {
      address: forwarderRefund.token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [forwarderRefund.forwarder as Address],
      blockTag: 'pending',
    });
    const promised = await unrelayedForwarderRefundUnits(trx, {
      forwarder: forwarderRefund.forwarder,
      token: forwarderRefund.token,
    });
    if (balance - promised < forwarderRefund.amount)
      throw conflict(
        `The forwarder holds ${balance} base units, ${promised} of them promised to authorized refunds: not enough for this refund`,
      );
    return markRefundAuthorized(trx, { refundId: refund.id, signature, gasPricing, now: app.now() });
  });
  // Another authorization (or a cancel) got there first.
  if (!authorized) {
    const now = await findMerchantRefund(app.db, ids);
    throw conflict(`Refund is ${now?.status ?? 'gone'}: it takes no authorization`);
  }
  await wakeRefundWorkflow(app, { refundId: refund.id, merchantId: ids.merchantId });
  return { status: 200, body: toRefundModel(authorized) };
}
