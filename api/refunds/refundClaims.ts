import { normaliseDecimal, toBaseUnits } from '../../money/baseUnits';
import { findRefundByClaimTokenHash, recordClaimedAddress, type RefundRow } from '../../db/refunds';
import { listPaymentOptions, type PaymentOptionRow } from '../../db/sessions';
import type { AppContext } from '../appContext';
import { conflict, HttpError, invalidField, notFound } from '../httpErrors';
import { hashClaimToken } from './createRefund';
import { wakeRefundWorkflow } from './refundWorkflowSignals';

/**
 * The claim link's public side (`/refund/<token>`; docs/service-contract.md "Refunds"): what the payer may
 * know of the refund, and the one submission of `{ chainId, address }`. The token is looked up by its hash;
 * an unknown (guessed) one is 404, an expired one 410, a second submission 409, and none of them changes
 * anything.
 */

export const claimNotFound = () => notFound('Refund link not found');
const claimExpired = () => new HttpError(410, 'This refund link has expired');

/** The chains the payer may choose: the refund's own when it is fixed, else every option of its token. */
function claimableOptions(refund: RefundRow, options: readonly PaymentOptionRow[]): PaymentOptionRow[] {
  return options.filter(
    (option) =>
      option.symbol === refund.token_symbol &&
      (refund.chain_id === null || option.chain_id === refund.chain_id),
  );
}

export interface RefundClaimView {
  amount: string;
  token: string;
  merchantName: string | null;
  status: RefundRow['status'];
  chains: { chainId: number; network: string }[];
  chainId: number | null;
  address: string | null;
  expiresAt: string;
}

async function claimedRefund(app: AppContext, token: string) {
  const refund = await findRefundByClaimTokenHash(app.db, hashClaimToken(token));
  if (!refund) throw claimNotFound();
  return refund;
}

function viewOf(
  refund: RefundRow & { merchant_name: string | null },
  options: PaymentOptionRow[],
): RefundClaimView {
  return {
    amount: normaliseDecimal(refund.amount),
    token: refund.token_symbol,
    merchantName: refund.merchant_name,
    status: refund.status,
    chains: claimableOptions(refund, options).map((option) => ({
      chainId: option.chain_id,
      network: option.network,
    })),
    chainId: refund.chain_id,
    address: refund.address,
    expiresAt: refund.claim_expires_at!.toISOString(),
  };
}

export async function readRefundClaim(app: AppContext, token: string): Promise<RefundClaimView> {
  const refund = await claimedRefund(app, token);
  if (refund.status === 'awaiting_address' && refund.claim_expires_at!.getTime() <= app.now().getTime())
    throw claimExpired();
  return viewOf(refund, await listPaymentOptions(app.db, refund.session_id));
}

export async function submitRefundClaim(
  app: AppContext,
  token: string,
  { chainId, address }: { chainId: number; address: string },
): Promise<RefundClaimView> {
  const refund = await claimedRefund(app, token);
  const now = app.now();
  if (refund.status !== 'awaiting_address') throw conflict('This refund already has its address');
  if (refund.claim_expires_at!.getTime() <= now.getTime()) throw claimExpired();
  const options = await listPaymentOptions(app.db, refund.session_id);
  const allowed = claimableOptions(refund, options);
  const option = allowed.find((candidate) => candidate.chain_id === chainId);
  if (!option)
    throw invalidField(
      'chainId',
      `must be one of: ${allowed.map((candidate) => candidate.chain_id).join(', ')}`,
    );
  const claimed = await recordClaimedAddress(app.db, {
    claimTokenHash: refund.claim_token_hash!,
    address,
    option: {
      chainId: option.chain_id,
      tokenAddress: option.token_address,
      decimals: option.decimals,
      depositAddress: option.deposit_address,
      payoutAddress: option.payout_address,
    },
    amountUnits: toBaseUnits(normaliseDecimal(refund.amount), option.decimals).toString(),
    status: refund.source === 'forwarder' ? 'awaiting_authorization' : 'awaiting_payment',
    now,
  });
  // Another submission (or a cancel) got there first.
  if (!claimed) throw conflict('This refund already has its address');
  await wakeRefundWorkflow(app, { refundId: claimed.id, merchantId: claimed.merchant_id });
  return viewOf({ ...claimed, merchant_name: refund.merchant_name }, options);
}
