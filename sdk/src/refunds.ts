import type { Client } from 'openapi-fetch';
import { idempotency, unwrap, type Body, type CreateOptions } from './calls';
import type { components, paths } from './generated/openapi';

type Refund = components['schemas']['Refund'];

/**
 * `POST /v1/sessions/{id}/refunds/{refundId}/authorize { signature }` as the refund contract states it.
 * Declared here while the generated document does not carry it yet; once `npm run sdk:generate`
 * has it, the generated path is the same shape.
 */
interface RefundAuthorizationPaths {
  '/v1/sessions/{id}/refunds/{refundId}/authorize': {
    parameters: { query?: never; header?: never; path?: never; cookie?: never };
    post: {
      parameters: { path: { id: string; refundId: string } };
      requestBody: { content: { 'application/json': { signature: string } } };
      responses: {
        200: { headers: { [name: string]: unknown }; content: { 'application/json': Refund } };
      };
    };
  };
}

/** A session's refunds with the `sk_` key (docs/service-contract.md "Refunds"), and the payments export. */
export function refundMethods(raw: Client<paths>) {
  const path = (id: string, refundId: string) => ({ params: { path: { id, refundId } } });
  return {
    /**
     * Refunds `amount` (default: all that is refundable) of a completed, expired or failed session; without
     * `address`, the answer's `claimUrl` (this once) lets the payer give one. Idempotent by its key.
     */
    createRefund: (
      sessionId: string,
      body: Body<'/v1/sessions/{id}/refunds', 'post'> = {},
      { idempotencyKey }: CreateOptions = {},
    ) =>
      unwrap(
        raw.POST('/v1/sessions/{id}/refunds', {
          params: { path: { id: sessionId } },
          body,
          headers: idempotency(idempotencyKey),
        }),
      ),
    listRefunds: (sessionId: string) =>
      unwrap(raw.GET('/v1/sessions/{id}/refunds', { params: { path: { id: sessionId } } })),
    getRefund: (sessionId: string, refundId: string) =>
      unwrap(raw.GET('/v1/sessions/{id}/refunds/{refundId}', path(sessionId, refundId))),
    /** While nothing has moved; its amount becomes refundable again. */
    cancelRefund: (sessionId: string, refundId: string) =>
      unwrap(raw.POST('/v1/sessions/{id}/refunds/{refundId}/cancel', path(sessionId, refundId))),
    /** The transaction that sent a merchant-paid refund's `transfer`; the api checks it on chain. */
    reportRefundTransaction: (sessionId: string, refundId: string, txHash: string) =>
      unwrap(
        raw.POST('/v1/sessions/{id}/refunds/{refundId}/transaction', {
          ...path(sessionId, refundId),
          body: { txHash },
        }),
      ),
    /**
     * The payout address's EIP-712 signature of a forwarder refund's `authorization.typedData` (ECDSA, or
     * ERC-1271 for a smart account): the forwarder then pays the refund back.
     */
    authorizeRefund: (sessionId: string, refundId: string, signature: string) =>
      unwrap(
        (raw as unknown as Client<RefundAuthorizationPaths>).POST(
          '/v1/sessions/{id}/refunds/{refundId}/authorize',
          { ...path(sessionId, refundId), body: { signature } },
        ),
      ),
    /**
     * The payments export as a stream of CSV text: one row per session created from `from` to `to` (UTC
     * dates `YYYY-MM-DD`, both included, at most 366 days), refunds included; a year never sits in memory.
     */
    exportSessions: async (query: { from: string; to: string }) =>
      (await unwrap(
        raw.GET('/v1/sessions/export', { params: { query: { ...query, format: 'csv' } }, parseAs: 'stream' }),
      )) as ReadableStream<Uint8Array>,
  };
}
