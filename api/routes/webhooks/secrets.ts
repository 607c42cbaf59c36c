import { z } from 'zod';
import { rotateWebhookSecret } from '../../../db/webhooks';
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
 * With overlap (docs/decisions.md "Webhook delivery operations"): until `previousSecretExpiresAt` every attempt carries two `v1=`
 * signatures, the new secret's and the old one's, so a receiver that still holds the old secret and
 * one that already holds the new one both verify. `overlapSeconds: 0` stops the old secret at once.
 */
export const DEFAULT_ROTATION_OVERLAP_SEC = 86_400;
export const MAX_ROTATION_OVERLAP_SEC = 604_800;

const rotateBody = z
  .object({
    overlapSeconds: z
      .number({ error: `must be an integer from 0 to ${MAX_ROTATION_OVERLAP_SEC}` })
      .int(`must be an integer from 0 to ${MAX_ROTATION_OVERLAP_SEC}`)
      .min(0, `must be an integer from 0 to ${MAX_ROTATION_OVERLAP_SEC}`)
      .max(MAX_ROTATION_OVERLAP_SEC, `must be an integer from 0 to ${MAX_ROTATION_OVERLAP_SEC}`)
      .optional()
      .describe(
        `How long the old secret keeps signing beside the new one; default ${DEFAULT_ROTATION_OVERLAP_SEC}`,
      ),
  })
  .strict()
  .meta({ id: 'WebhookSecretRotationRequest' });

export function webhookSecretRoutes(app: AppContext): AnyRoute[] {
  return WEBHOOK_ROUTE_SETS.map(({ base, auth, audience, label }) =>
    defineRoute({
      method: 'post',
      path: `${base}/:id/rotate-secret`,
      auth,
      tag: WEBHOOKS_TAG,
      audience,
      summary: `Replace the endpoint's signing secret; the new whsec_ secret is returned once, and the old one keeps signing beside it for the overlap (${label})`,
      params: endpointIdParams,
      body: rotateBody,
      responses: {
        200: { description: 'The new secret', schema: rotatedSecretSchema },
        400: { description: 'overlapSeconds out of range' },
        404: { description: 'Unknown or foreign endpoint' },
      },
      async handler({ merchantId, params, body }) {
        const secret = generateWebhookSecret();
        const overlapSec = body.overlapSeconds ?? DEFAULT_ROTATION_OVERLAP_SEC;
        const previousSecretExpiresAt =
          overlapSec > 0 ? new Date(app.now().getTime() + overlapSec * 1000) : null;
        const updated = await rotateWebhookSecret(app.db, {
          merchantId,
          id: params.id,
          secretCiphertext: app.webhookSecrets.seal(secret, params.id),
          previousSecretExpiresAt,
        });
        if (!updated) throw webhookEndpointNotFound();
        return {
          status: 200,
          body: {
            id: updated.id,
            secret,
            previousSecretExpiresAt: previousSecretExpiresAt?.toISOString() ?? null,
          },
        };
      },
    }),
  );
}
