import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../db/client';
import {
  hasRefundWithIdempotencyKey,
  insertRefund,
  lockMerchantSession,
  microUsdFloorOf,
  refundableOptionsOf,
  replaceClaimToken,
  sessionAmountOf,
  type RefundableOption,
} from '../../db/refunds';
import { usdExceeds } from '../../db/receivedAmounts';
import { isTopupSession } from '../../db/topups';
import type { RefundSource, RefundStatus } from '../../db/refundStatus';
import type { SessionStatus } from '../../db/sessionStatus';
import { toBaseUnits } from '../../money/baseUnits';
import type { AppContext } from '../appContext';
import { conflict, invalidField } from '../httpErrors';
import { IdempotencyRace, idempotently } from '../routing/idempotency';
import { sessionNotFound } from '../routes/sessions/sessions';
import { wakeRefundWorkflow } from './refundWorkflowSignals';
import { claimUrlOf, type CreateRefundBody } from '../routes/refunds/refundModels';
import { toRefundModel, type RefundModel } from '../../webhooks/refundObject';

/**
 * Creating a refund (docs/service-contract.md "Refunds") for both credentials' routes. Under the session's
 * row lock: the amount is checked against what the session received less every live refund, the source and
 * token are decided from where the money is (docs/decisions.md "Refunds: the resource"), and the row is
 * written, in one transaction with the Idempotency-Key's record. The claim token is returned once and
 * stored only as its hash.
 */

const IDEMPOTENCY_SCOPE = 'refunds.create';
/** A claim link is valid this long; a payer who has not answered by then needs a new refund. */
const CLAIM_LINK_TTL_MS = 30 * 24 * 3600 * 1000;

/** Sessions whose money is decided: a refund of one still being paid or settled would race its workflow. */
const REFUNDABLE_SESSION_STATUSES: readonly SessionStatus[] = ['completed', 'expired', 'failed'];

export const hashClaimToken = (token: string) => createHash('sha256').update(token).digest('hex');
const newClaimToken = () => randomBytes(32).toString('base64url');

/** Where the refund is paid from, on which chain and in which token. */
interface RefundRoute {
  source: RefundSource;
  symbol: string;
  /** The chain's option, or undefined when the payer will choose the chain through the claim link. */
  option?: RefundableOption;
}

/**
 * `forwarder` when one option's unswept funds (less what other forwarder refunds hold) cover the amount, on the
 * requested chain if one is named; otherwise `merchant`, in the stablecoin the customer paid first, on the named
 * chain, or the one paid on when the address is known, or left to the payer's claim.
 */
function routeOf(
  options: readonly RefundableOption[],
  { amount, chainId, address }: { amount: string; chainId?: number; address?: string },
): RefundRoute {
  const onChain = (option: RefundableOption) => chainId === undefined || option.chainId === chainId;
  const forwarder = options.find(
    (option) => onChain(option) && option.unsweptUnits >= toBaseUnits(amount, option.decimals),
  );
  if (forwarder) return { source: 'forwarder', symbol: forwarder.symbol, option: forwarder };
  const paid = options
    .filter((option) => option.firstDepositBlock !== null)
    .sort((left, right) => (left.firstDepositBlock! < right.firstDepositBlock! ? -1 : 1))[0]!;
  if (chainId === undefined)
    return { source: 'merchant', symbol: paid.symbol, option: address === undefined ? undefined : paid };
  const option = options.find(
    (candidate) => candidate.chainId === chainId && candidate.symbol === paid.symbol,
  );
  if (!option) {
    const chains = [...new Set(options.filter((o) => o.symbol === paid.symbol).map((o) => o.chainId))];
    throw invalidField(
      'chainId',
      `must be a chain the session offers ${paid.symbol} on: ${chains.join(', ')}`,
    );
  }
  return { source: 'merchant', symbol: paid.symbol, option };
}

function statusOf(route: RefundRoute, address: string | undefined): RefundStatus {
  if (address === undefined) return 'awaiting_address';
  return route.source === 'forwarder' ? 'awaiting_authorization' : 'awaiting_payment';
}

/** The amount asked for, or all that is refundable; refused when it is more than that. */
function amountOf(requested: string | undefined, refundableAmount: string): string {
  const amount = requested ?? microUsdFloorOf(refundableAmount);
  if (requested === undefined && amount === '0') throw conflict('Nothing left to refund on this session');
  if (usdExceeds(amount, refundableAmount))
    throw invalidField('amount', `must be at most the session’s refundable amount (${refundableAmount})`);
  return amount;
}

export interface CreateRefundParameters {
  merchantId: string;
  sessionId: string;
  request: CreateRefundBody;
  idempotencyKey: string | undefined;
}

export async function createRefund(
  app: AppContext,
  { merchantId, sessionId, request, idempotencyKey }: CreateRefundParameters,
): Promise<{ status: number; body: RefundModel }> {
  const claimToken = request.address === undefined ? newClaimToken() : undefined;
  const now = app.now();
  const work = async (trx: Db) => {
    const session = await lockMerchantSession(trx, merchantId, sessionId);
    if (!session) throw sessionNotFound();
    // A request with the same key held the lock before this one and committed: answer as it did, not as a
    // second refund judged against the first one's amount.
    if (idempotencyKey !== undefined && (await hasRefundWithIdempotencyKey(trx, merchantId, idempotencyKey)))
      throw new IdempotencyRace();
    // A top-up paid the platform's treasury and credited the prepaid balance: not the merchant's to refund.
    if (await isTopupSession(trx, sessionId)) throw conflict('A prepaid balance top-up is not refunded');
    if (!REFUNDABLE_SESSION_STATUSES.includes(session.status))
      throw conflict(
        'Session is still being paid or settled; refund it once it is completed, expired or failed',
      );
    const amount = amountOf(request.amount, (await sessionAmountOf(trx, sessionId)).refundableAmount);
    const route = routeOf(await refundableOptionsOf(trx, sessionId), { ...request, amount });
    const row = await insertRefund(trx, {
      id: randomUUID(),
      merchant_id: merchantId,
      session_id: sessionId,
      amount,
      reason: request.reason ?? null,
      status: statusOf(route, request.address),
      source: route.source,
      chain_id: route.option?.chainId ?? null,
      token_symbol: route.symbol,
      token_address: route.option?.tokenAddress ?? null,
      token_decimals: route.option?.decimals ?? null,
      amount_units: route.option ? toBaseUnits(amount, route.option.decimals).toString() : null,
      // A forwarder refund is paid from the option's forwarder on the signature of its payout address.
      forwarder_address: route.source === 'forwarder' ? route.option!.depositAddress : null,
      payout_address: route.source === 'forwarder' ? route.option!.payoutAddress : null,
      address: request.address ?? null,
      claim_token_hash: claimToken === undefined ? null : hashClaimToken(claimToken),
      claim_expires_at: claimToken === undefined ? null : new Date(now.getTime() + CLAIM_LINK_TTL_MS),
      idempotency_key: idempotencyKey ?? null,
    });
    // A concurrent request with the same key committed its refund first: answer as it did.
    if (!row) throw new IdempotencyRace();
    // The stored answer never holds the claim token: it is added below, to this answer only.
    return { status: 201, body: toRefundModel(row) };
  };
  const created = await idempotently<RefundModel>(
    app.db,
    { merchantId, scope: IDEMPOTENCY_SCOPE, key: idempotencyKey, request: { sessionId, ...request } },
    work,
  );
  if (!created.replayed) {
    await wakeRefundWorkflow(app, { refundId: created.body.id, merchantId });
    return {
      status: created.status,
      body: {
        ...created.body,
        claimUrl: claimToken === undefined ? null : claimUrlOf(app.config.PUBLIC_BASE_URL, claimToken),
      },
    };
  }
  return { status: created.status, body: await withFreshClaimLink(app, created.body) };
}

/**
 * A repeated create whose first answer the client may never have seen: when the refund still waits for its
 * address through a claim link, that link is replaced by a new one (the token was never stored) and answered.
 */
async function withFreshClaimLink(app: AppContext, body: RefundModel): Promise<RefundModel> {
  if (body.address !== null) return body;
  const claimToken = newClaimToken();
  const replaced = await replaceClaimToken(app.db, {
    refundId: body.id,
    claimTokenHash: hashClaimToken(claimToken),
    now: app.now(),
  });
  return replaced ? { ...body, claimUrl: claimUrlOf(app.config.PUBLIC_BASE_URL, claimToken) } : body;
}
