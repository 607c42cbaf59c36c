import { randomUUID } from 'node:crypto';
import type { Address } from 'viem';
import type { Db } from '../../db/client';
import {
  insertPaymentSession,
  NoPaymentOptionError,
  UnknownMerchantError,
  type PaymentSessionFields,
} from '../../db/paymentSessionCreation';
import { withTemporalDeadline } from '../../workflowClient/connection';
import { startSessionWorkflow } from '../../workflowClient/sessions';
import type { AppContext } from '../appContext';
import { badRequest, unauthorized } from '../httpErrors';
import { idempotently, type IdempotentAnswer } from '../routing/idempotency';

/**
 * Creating a payment session, for every route that makes one (SK and dashboard create, top-ups):
 * payment options computed exactly, the session and its options written in one statement
 * (db/paymentSessionCreation.ts, which a subscription's period shares) (in one
 * transaction with the idempotency record and any rows that belong with it, when there are such), then
 * the workflow started. A crash after the commit leaves `workflow_started_at` empty for the reconciler.
 */

const IDEMPOTENCY_SCOPE = 'sessions.create';
const DEFAULT_EXPIRES_IN_SEC = 3600;

/** What a merchant asks for (the create body, validated by the route). */
export interface PaymentSessionRequest extends PaymentSessionFields {
  expiresInSec?: number;
}

export interface CreatePaymentSessionParameters {
  merchantId: string;
  request: PaymentSessionRequest;
  /** The validated Idempotency-Key, if the caller sent one. */
  idempotencyKey?: string;
  /** Where each chain's forwarder settles; the merchant's payout address unless given (top-ups: the treasury). */
  payoutAddressOf?: (chainId: number) => Address;
  /** Rows that belong with the session (a top-up's link), written in its transaction: both or neither. */
  alsoWrite?: (trx: Db, sessionId: string) => Promise<void>;
}

export interface PaymentSessionCreated {
  status: number;
  body: { id: string; paymentUrl: string; status: string; expiresAt: string; createdAt: string };
}

export const paymentUrlOf = (publicBaseUrl: string, id: string) => `${publicBaseUrl}/pay/${id}`;

export async function createPaymentSession(
  app: AppContext,
  { merchantId, request, idempotencyKey, payoutAddressOf, alsoWrite }: CreatePaymentSessionParameters,
): Promise<PaymentSessionCreated> {
  const sessionId = randomUUID();
  const sandboxMode = request.sandboxMode ?? false;
  const now = app.now();
  const expiresAt = new Date(now.getTime() + (request.expiresInSec ?? DEFAULT_EXPIRES_IN_SEC) * 1000);

  const work = async (db: Db): Promise<IdempotentAnswer<PaymentSessionCreated['body']>> => {
    const row = await insertPaymentSession(db, app.networks, {
      id: sessionId,
      merchantId,
      fields: request,
      expiresAt,
      now,
      payoutAddressOf,
    }).catch((error: unknown) => {
      if (error instanceof UnknownMerchantError) throw unauthorized(error.message);
      if (error instanceof NoPaymentOptionError) throw badRequest(error.message);
      throw error;
    });
    await alsoWrite?.(db, row.id);
    return {
      status: 201,
      body: {
        id: row.id,
        paymentUrl: paymentUrlOf(app.config.PUBLIC_BASE_URL, row.id),
        status: row.status,
        expiresAt: row.expires_at.toISOString(),
        createdAt: row.created_at.toISOString(),
      },
    };
  };
  // Without an Idempotency-Key or rows to write beside it, the one insert statement is the whole write:
  // no transaction (BEGIN and COMMIT were two of the route's round trips). The merchant read before it is
  // read-committed either way.
  const created =
    idempotencyKey === undefined && !alsoWrite
      ? { ...(await work(app.db)), replayed: false }
      : await idempotently<PaymentSessionCreated['body']>(
          app.db,
          { merchantId, scope: IDEMPOTENCY_SCOPE, key: idempotencyKey, request },
          work,
        );
  if (created.replayed) return { status: created.status, body: created.body };

  try {
    // Bounded: past TEMPORAL_START_TIMEOUT_MS the session is stored and payable, and the answer is still 201.
    await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
      startSessionWorkflow(app.temporal, {
        sessionId,
        merchantId,
        sandboxMode,
        expiresAt,
        taskQueue: app.taskQueues.sessions,
      }),
    );
    await app.markWorkflowStarted(sessionId);
  } catch (error) {
    // The session exists and is payable; the reconciler starts its workflow once Temporal answers.
    app.logger.warn({ err: error, sessionId }, 'session workflow not started; left to the reconciler');
  }
  return { status: created.status, body: created.body };
}
