import { replaceWebhookSecret } from '../../../db/webhooks';
import { generateWebhookSecret } from '../../../webhooks/webhookSecrets';
import type { AppContext } from '../../appContext';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { webhookEndpointNotFound } from './endpoints';
import { WEBHOOK_ROUTE_SETS, WEBHOOKS_TAG } from './routeSets';
import { endpointIdParams, rotatedSecretSchema } from './webhookModels';

/**
 * Under `/v1/merchants/me/webhooks` (JWT) and `/v1/webhooks` (SK):
 * | POST | /{id}/rotate-secret | 200 new signing secret |
 *
 * The old secret stops at once: every attempt from now on, retries of earlier events included, is
 * signed with the new one (no overlap window; receivers swap the secret when they rotate it).
 */
export function webhookSecretRoutes(app: AppContext): AnyRoute[] {
  return WEBHOOK_ROUTE_SETS.map(({ base, auth, audience, label }) =>
    defineRoute({
      method: 'post',
      path: `${base}/:id/rotate-secret`,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `Replace the endpoint's signing secret; the new whsec_ secret is returned once (${label})`,
      params: endpointIdParams,
      responses: {
        200: { description: 'The new secret', schema: rotatedSecretSchema },
        404: { description: 'Unknown or foreign endpoint' },
      },
      async handler({ merchantId, params }) {
        const secret = generateWebhookSecret();
        const updated = await replaceWebhookSecret(
          app.db,
          merchantId,
          params.id,
          app.webhookSecrets.seal(secret, params.id),
        );
        if (!updated) throw webhookEndpointNotFound();
        return { status: 200, body: { id: updated.id, secret } };
      },
    }),
  );
}
