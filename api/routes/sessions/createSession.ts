import type { AppContext } from '../../appContext';
import { idempotencyKeyOf } from '../../routing/idempotency';
import { defineRoute } from '../../routing/route';
import { createPaymentSession } from '../../sessions/createPaymentSession';
import { createSessionBody, sessionCreatedSchema } from './sessionModels';

/**
 * The create route, mounted twice with the same body and answers: `POST /v1/sessions` (SK) and
 * `POST /v1/merchants/me/sessions` (JWT). The work is api/sessions/createPaymentSession.ts.
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
    idempotencyKey: true,
    responses: {
      201: { description: 'Created', schema: sessionCreatedSchema },
      400: { description: 'Invalid body' },
      409: { description: 'Idempotency-Key reused with a different body' },
    },
    handler: ({ merchantId, body, ctx }) =>
      createPaymentSession(app, {
        merchantId,
        request: body,
        idempotencyKey: idempotencyKeyOf(ctx.get('idempotency-key')),
      }),
  });
}
