import { z } from 'zod';
import { cancelRefund, findMerchantRefund, listSessionRefunds } from '../../../db/refunds';
import { findMerchantSession } from '../../../db/sessions';
import { createRefund } from '../../refunds/createRefund';
import { reportRefundTransaction } from '../../refunds/reportRefundTransaction';
import { authorizeRefund } from '../../refunds/authorizeRefund';
import { wakeRefundWorkflow } from '../../refunds/refundWorkflowSignals';
import type { AppContext } from '../../appContext';
import { conflict, notFound } from '../../httpErrors';
import { idempotencyKeyOf } from '../../routing/idempotency';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { twinRouteSets, type TwinRouteSet } from '../../routing/twinRouteSets';
import { sessionIdParams, sessionNotFound } from '../sessions/sessions';
import { refundSchema, toRefundModel } from '../../../webhooks/refundObject';
import {
  authorizeRefundBody,
  createRefundBody,
  refundPathParams,
  reportTransactionBody,
} from './refundModels';

/**
 * Refunds of a session under `/v1/merchants/me/sessions/{id}/refunds` (JWT) and `/v1/sessions/{id}/refunds`
 * (SK), identical shapes (docs/service-contract.md "Refunds"):
 * | POST | (collection)          | 201 refund (claimUrl shown once); 400 field; 404 foreign session; 409 nothing refundable or session busy |
 * | GET  | (collection)          | 200 the session's refunds, newest first |
 * | GET  | /{refundId}           | 200 refund |
 * | POST | /{refundId}/cancel    | 200 canceled refund (again: unchanged); 409 once money moved |
 * | POST | /{refundId}/transaction | 200 processing refund (merchant-paid; verified on chain); 400 not that transfer; 409 not awaiting payment or tx used |
 * | POST | /{refundId}/authorize | 200 processing refund (forwarder; the payout address's signature verified); 400 signature; 409 not awaiting authorization, used, or not covered |
 */

const REFUND_ROUTE_SETS = twinRouteSets({ jwtBase: '/v1/merchants/me/sessions', skBase: '/v1/sessions' });

export const REFUNDS_TAG = 'Refunds';

const refundNotFound = () => notFound('Refund not found');

/** The collection's routes: create and list. */
function refundCollectionRoutes(app: AppContext, { base, auth, audience, label }: TwinRouteSet): AnyRoute[] {
  const collection = `${base}/:id/refunds`;
  return [
    defineRoute({
      method: 'post',
      path: collection,
      auth,
      tag: REFUNDS_TAG,
      audience,
      summary: `Refund a session, all that is refundable or part of it (${label})`,
      params: sessionIdParams,
      body: createRefundBody,
      idempotencyKey: true,
      responses: {
        201: { description: 'Created', schema: refundSchema },
        400: { description: 'Invalid field, or an amount above what is refundable' },
        404: { description: 'Unknown or foreign session' },
        409: {
          description:
            'Nothing left to refund, the session is still being paid or settled, or the Idempotency-Key was used with another body',
        },
      },
      handler: ({ merchantId, params, body, ctx }) =>
        createRefund(app, {
          merchantId,
          sessionId: params.id,
          request: body,
          idempotencyKey: idempotencyKeyOf(ctx.get('idempotency-key')),
        }),
    }),

    defineRoute({
      method: 'get',
      path: collection,
      auth,
      tag: REFUNDS_TAG,
      audience,
      summary: `A session’s refunds, newest first (${label})`,
      params: sessionIdParams,
      responses: {
        200: { description: 'Refunds', schema: z.object({ data: z.array(refundSchema) }) },
        404: { description: 'Unknown or foreign session' },
      },
      async handler({ merchantId, params }) {
        if (!(await findMerchantSession(app.db, merchantId, params.id))) throw sessionNotFound();
        const rows = await listSessionRefunds(app.db, merchantId, params.id);
        return { status: 200, body: { data: rows.map((row) => toRefundModel(row)) } };
      },
    }),
  ];
}

/** One refund's routes: read, cancel, and the merchant-paid refund's transaction. */
function refundItemRoutes(app: AppContext, { base, auth, audience, label }: TwinRouteSet): AnyRoute[] {
  const collection = `${base}/:id/refunds`;
  return [
    defineRoute({
      method: 'get',
      path: `${collection}/:refundId`,
      auth,
      tag: REFUNDS_TAG,
      audience,
      summary: `One refund of a session (${label})`,
      params: refundPathParams,
      responses: {
        200: { description: 'Refund', schema: refundSchema },
        404: { description: 'Unknown or foreign refund' },
      },
      async handler({ merchantId, params }) {
        const row = await findMerchantRefund(app.db, {
          merchantId,
          sessionId: params.id,
          refundId: params.refundId,
        });
        if (!row) throw refundNotFound();
        return { status: 200, body: toRefundModel(row) };
      },
    }),

    defineRoute({
      method: 'post',
      path: `${collection}/:refundId/cancel`,
      auth,
      tag: REFUNDS_TAG,
      audience,
      summary: `Cancel a refund while nothing has moved (${label})`,
      params: refundPathParams,
      responses: {
        200: { description: 'Canceled refund', schema: refundSchema },
        404: { description: 'Unknown or foreign refund' },
        409: { description: 'The refund is processing or finished: money moved or is moving' },
      },
      async handler({ merchantId, params }) {
        const row = await cancelRefund(
          app.db,
          { merchantId, sessionId: params.id, refundId: params.refundId },
          app.now(),
        );
        if (!row) throw refundNotFound();
        if (row.status !== 'canceled')
          throw conflict(`Refund is ${row.status}: it can no longer be canceled`);
        await wakeRefundWorkflow(app, { refundId: row.id, merchantId });
        return { status: 200, body: toRefundModel(row) };
      },
    }),

    defineRoute({
      method: 'post',
      path: `${collection}/:refundId/transaction`,
      auth,
      tag: REFUNDS_TAG,
      audience,
      summary: `Report the transaction that paid a merchant-paid refund: verified on chain (${label})`,
      params: refundPathParams,
      body: reportTransactionBody,
      responses: {
        200: {
          description: 'The refund, processing until the transfer has its confirmations',
          schema: refundSchema,
        },
        400: {
          description:
            'Invalid hash, or the transaction is not a mined, successful transfer of exactly the refund’s token, address and amount on its chain',
        },
        404: { description: 'Unknown or foreign refund' },
        409: {
          description:
            'Not a merchant-paid refund waiting for its payment, or the transaction already pays another refund',
        },
      },
      handler: ({ merchantId, params, body }) =>
        reportRefundTransaction(
          app,
          { merchantId, sessionId: params.id, refundId: params.refundId },
          body.txHash,
        ),
    }),

    defineRoute({
      method: 'post',
      path: `${collection}/:refundId/authorize`,
      auth,
      tag: REFUNDS_TAG,
      audience,
      summary: `Authorize a forwarder refund with the payout address’s EIP-712 signature (${label})`,
      params: refundPathParams,
      body: authorizeRefundBody,
      responses: {
        200: {
          description: 'The refund, processing: the operator relays it and it succeeds once confirmed',
          schema: refundSchema,
        },
        400: {
          description:
            'The signature is not hex, or not the payout address’s (ECDSA or ERC-1271) over exactly this refund: nothing moved',
        },
        404: { description: 'Unknown or foreign refund' },
        409: {
          description:
            'Not a forwarder refund awaiting its authorization (already authorized, used, canceled or finished), a sweep of the forwarder is in flight, or the forwarder no longer holds the amount',
        },
      },
      handler: ({ merchantId, params, body }) =>
        authorizeRefund(
          app,
          { merchantId, sessionId: params.id, refundId: params.refundId },
          body.signature as `0x${string}`,
        ),
    }),
  ];
}

export function refundRoutes(app: AppContext): AnyRoute[] {
  return REFUND_ROUTE_SETS.flatMap((routeSet) => [
    ...refundCollectionRoutes(app, routeSet),
    ...refundItemRoutes(app, routeSet),
  ]);
}
