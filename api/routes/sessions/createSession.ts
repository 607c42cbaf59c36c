import { createHash, randomUUID } from 'node:crypto';
import { getAddress, type Address } from 'viem';
import { buildPaymentOptions } from '../../../chain/paymentOptions';
import { findIdempotentResponse, storeIdempotentResponse } from '../../../db/idempotencyKeys';
import type { Db } from '../../../db/client';
import { findMerchantById } from '../../../db/merchants';
import { insertSessionWithOptions, markWorkflowStarted } from '../../../db/sessions';
import { startSessionWorkflow } from '../../../workflowClient/sessions';
import { withTemporalDeadline } from '../../../workflowClient/connection';
import type { AppContext } from '../../appContext';
import { badRequest, conflict, unauthorized } from '../../httpErrors';
import { defineRoute } from '../../routing/route';
import {
  createSessionBody,
  PAYMENT_SYMBOLS,
  paymentUrlOf,
  sessionCreatedSchema,
  type CreateSessionBody,
} from './sessionModels';

const IDEMPOTENCY_SCOPE = 'sessions.create';
const DEFAULT_EXPIRES_IN_SEC = 3600;

export interface SessionCreated {
  status: number;
  body: { id: string; paymentUrl: string; status: string; expiresAt: string; createdAt: string };
}

/** Thrown inside the transaction to roll it back when a concurrent request with the same key won. */
class IdempotencyRace extends Error {}

/** JSON with sorted keys, so the same body in another key order hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Creates a payment session for both create routes (SK and dashboard): options computed exactly,
 * session and options written in one transaction (with the idempotency record), then the workflow
 * started. A crash after the commit leaves `workflow_started_at` empty for the reconciler.
 */
export async function createPaymentSession(
  app: AppContext,
  {
    merchantId,
    body,
    idempotencyKey,
    payoutAddressOf,
    alsoWrite,
  }: {
    merchantId: string;
    body: CreateSessionBody;
    idempotencyKey?: string;
    /** Where each chain's forwarder settles; the merchant's payout address unless given (top-ups: the treasury). */
    payoutAddressOf?: (chainId: number) => Address;
    /** Rows that belong with the session (a top-up's link), written in its transaction: both or neither. */
    alsoWrite?: (trx: Db, sessionId: string) => Promise<void>;
  },
): Promise<SessionCreated> {
  const requestHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
  const replay = async () => {
    const stored =
      idempotencyKey &&
      (await findIdempotentResponse(app.db, { merchantId, scope: IDEMPOTENCY_SCOPE, key: idempotencyKey }));
    if (!stored) return undefined;
    if (stored.requestHash !== requestHash)
      throw conflict('Idempotency-Key was already used with a different request body');
    return { status: stored.status, body: stored.body as SessionCreated['body'] };
  };
  const earlier = await replay();
  if (earlier) return earlier;

  const merchant = await findMerchantById(app.db, merchantId);
  if (!merchant) throw unauthorized('Unknown merchant');

  const now = app.now();
  const sessionId = randomUUID();
  const sandboxMode = body.sandboxMode ?? false;
  const expiresAt = new Date(now.getTime() + (body.expiresInSec ?? DEFAULT_EXPIRES_IN_SEC) * 1000);
  const payoutAddress = getAddress(merchant.payout_address);
  const options = buildPaymentOptions({
    sessionId,
    amountUsd: body.amount,
    symbols: body.paymentOptionSymbols ?? PAYMENT_SYMBOLS,
    networks: app.networks.paymentNetworks(sandboxMode),
    payoutAddressOf: payoutAddressOf ?? (() => payoutAddress),
  });
  if (options.length === 0) {
    throw badRequest(
      `No payment option is available: no ${sandboxMode ? 'testnet' : 'mainnet'} with a deployed forwarder factory offers ${(body.paymentOptionSymbols ?? PAYMENT_SYMBOLS).join(', ')}`,
    );
  }

  let created: SessionCreated;
  try {
    created = await app.db.transaction().execute(async (trx) => {
      const row = await insertSessionWithOptions(
        trx,
        {
          id: sessionId,
          merchant_id: merchantId,
          amount: body.amount,
          merchant_name: body.merchantName ?? merchant.name,
          line_items: JSON.stringify(body.lineItems ?? []),
          payment_option_symbols: [...new Set(options.map((option) => option.symbol))],
          sandbox_mode: sandboxMode,
          success_url: body.successUrl ?? null,
          payout_address: payoutAddress,
          expires_at: expiresAt,
          created_at: now,
          updated_at: now,
        },
        options.map((option) => ({
          chain_id: option.chainId,
          network: option.network,
          symbol: option.symbol,
          token_address: option.tokenAddress,
          decimals: option.decimals,
          amount: option.amount,
          deposit_address: option.depositAddress,
          payout_address: option.payoutAddress,
        })),
      );
      await alsoWrite?.(trx, row.id);
      const response: SessionCreated = {
        status: 201,
        body: {
          id: row.id,
          paymentUrl: paymentUrlOf(app.config.PUBLIC_BASE_URL, row.id),
          status: row.status,
          expiresAt: row.expires_at.toISOString(),
          createdAt: row.created_at.toISOString(),
        },
      };
      if (idempotencyKey) {
        const stored = await storeIdempotentResponse(trx, {
          merchantId,
          scope: IDEMPOTENCY_SCOPE,
          key: idempotencyKey,
          requestHash,
          ...response,
        });
        if (!stored) throw new IdempotencyRace();
      }
      return response;
    });
  } catch (error) {
    if (error instanceof IdempotencyRace) return (await replay())!;
    throw error;
  }

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
    await markWorkflowStarted(app.db, sessionId);
  } catch (error) {
    // The session exists and is payable; the reconciler starts its workflow once Temporal answers.
    app.logger.warn({ err: error, sessionId }, 'session workflow not started; left to the reconciler');
  }
  return created;
}

/**
 * The create route, mounted twice with the same body and answers: `POST /v1/sessions` (SK) and
 * `POST /v1/merchants/me/sessions` (JWT).
 */
export function createSessionRoute(
  app: AppContext,
  {
    path,
    auth,
    audience,
    summary,
  }: { path: string; auth: 'sk' | 'jwt'; audience: 'integrator' | 'dashboard'; summary: string },
) {
  return defineRoute({
    method: 'post',
    path,
    auth,
    tag: 'Payment sessions',
    audience,
    summary,
    body: createSessionBody,
    responses: {
      201: { description: 'Created', schema: sessionCreatedSchema },
      400: { description: 'Invalid body' },
      409: { description: 'Idempotency-Key reused with a different body' },
    },
    handler: ({ merchantId, body, ctx }) =>
      createPaymentSession(app, {
        merchantId,
        body,
        idempotencyKey: idempotencyKeyOf(ctx.get('idempotency-key')),
      }),
  });
}

/** Stripe-style Idempotency-Key: printable ASCII, bounded, so it can be stored and compared safely. */
export function idempotencyKeyOf(header: string): string | undefined {
  if (!header) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(header))
    throw badRequest('Idempotency-Key must be 1 to 255 printable ASCII characters');
  return header;
}
