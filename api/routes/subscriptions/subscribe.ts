import { getAddress, type Hex } from 'viem';
import { z } from 'zod';
import { STABLECOIN_SYMBOLS } from '../../../chain/stablecoins';
import { manageUrlOf } from '../../../subscriptions/manageTokens';
import { subscribe } from '../../../subscriptions/subscribe';
import { withTemporalDeadline } from '../../../workflowClient/connection';
import { startSubscriptionWorkflow } from '../../../workflowClient/subscriptions';
import type { AppContext } from '../../appContext';
import { badRequest, notFound, serviceUnavailable } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { PLANS_TAG } from '../plans/plans';
import { subscriptionSchema, toSubscriptionModel } from './subscriptionModels';

/**
 * | POST | /v1/subscribe/{planId} | none | 201 subscription; 200 the one this signed permission already backs |
 *
 * The subscribe page's call (no credential, rate limited per client IP like the other public routes): the
 * customer's signed periodic permission for the plan, judged before anything is saved — refused with the
 * sentence saying why (400), nothing written. Accepted, the subscription (`trialing` with trial days, else
 * `active`) and its `subscription.created` event are written together and its charging workflow started;
 * the answer that created it carries the customer's manage link (subscriptions/manageTokens.ts).
 */

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address');
const hexBytes = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, 'must be 0x-prefixed hex bytes');

export const subscribeBody = z
  .object({
    chainId: z.number({ error: 'must be a chain id' }).int().positive(),
    token: z.enum(STABLECOIN_SYMBOLS, { error: `must be one of: ${STABLECOIN_SYMBOLS.join(', ')}` }),
    delegation: z
      .object({
        delegate: address,
        delegator: address.describe("The customer's DeleGator account"),
        authority: z
          .string()
          .regex(/^0x[0-9a-fA-F]{64}$/, 'must be 32 bytes of hex (a root delegation: 0xff…ff)'),
        caveats: z
          .array(z.object({ enforcer: address, terms: hexBytes, args: hexBytes.optional() }).strict())
          .max(8, 'must carry at most 8 caveats'),
        salt: z
          .string()
          .regex(/^(0x[0-9a-fA-F]{1,64}|\d{1,78})$/, 'must be a uint256 as a decimal or 0x string'),
        signature: hexBytes,
      })
      .strict()
      .describe('The ERC-7710 delegation the customer signed (ERC-7715 erc20-token-periodic)'),
  })
  .strict()
  .meta({ id: 'SubscribeRequest' });

/** The subscription, and the customer's manage link in the answer that created it (null on a repeat). */
export const subscribeAnswerSchema = subscriptionSchema
  .extend({
    manageUrl: z
      .string()
      .nullable()
      .describe(
        'The customer’s link to see and cancel the subscription: shown once, in the answer that created it; null when the same permission is sent again',
      ),
  })
  .meta({ id: 'SubscribeAnswer' });

export function subscribeRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/subscribe/:planId',
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: PLANS_TAG,
      audience: 'dashboard',
      summary: "Subscribe to a plan with the customer's signed periodic permission",
      params: z.object({ planId: z.string().uuid() }),
      body: subscribeBody,
      responses: {
        201: { description: 'Subscribed', schema: subscribeAnswerSchema },
        200: {
          description: 'The subscription this permission already backs (no manage link)',
          schema: subscribeAnswerSchema,
        },
        400: {
          description: 'The permission is not exactly the plan’s, or the chain or token is not offered',
        },
        404: { description: 'Unknown plan' },
        503: { description: 'The chain or Temporal did not answer; send the same request again' },
      },
      async handler({ params, body }) {
        const { delegation } = body;
        const outcome = await subscribe(
          {
            db: app.db,
            networks: app.networks,
            clientOf: (chainId) => app.publicClients.forChain(chainId),
            executor: app.config.SUBSCRIPTION_EXECUTOR_ADDRESS
              ? getAddress(app.config.SUBSCRIPTION_EXECUTOR_ADDRESS)
              : undefined,
            now: app.now(),
          },
          {
            planId: params.planId,
            chainId: body.chainId,
            token: body.token,
            delegation: {
              delegate: getAddress(delegation.delegate),
              delegator: getAddress(delegation.delegator),
              authority: delegation.authority as Hex,
              caveats: delegation.caveats.map((caveat) => ({
                enforcer: getAddress(caveat.enforcer),
                terms: caveat.terms as Hex,
                args: (caveat.args ?? '0x') as Hex,
              })),
              salt: BigInt(delegation.salt),
              signature: delegation.signature as Hex,
            },
          },
        );
        if (outcome.kind === 'unknown_plan') throw notFound('Plan not found');
        if (outcome.kind === 'refused') throw badRequest(outcome.reason);
        if (outcome.kind === 'unavailable') throw serviceUnavailable(`${outcome.reason}; try again`);
        try {
          await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
            startSubscriptionWorkflow(app.temporal, {
              subscriptionId: outcome.row.id,
              merchantId: outcome.row.merchant_id,
              schedule: outcome.schedule,
              createdEventId: outcome.createdEventId,
              taskQueue: app.taskQueues.sessions,
            }),
          );
        } catch (error) {
          // Saved but not yet scheduled: the same request again finds it and starts its workflow.
          app.logger.warn(
            { err: error, subscriptionId: outcome.row.id },
            'subscription workflow not started',
          );
          throw serviceUnavailable(
            'The subscription is saved but its charging could not be scheduled; send the same request again',
          );
        }
        return {
          status: outcome.kind === 'subscribed' ? 201 : 200,
          body: {
            ...toSubscriptionModel(outcome.row),
            manageUrl:
              outcome.kind === 'subscribed'
                ? manageUrlOf(app.config.PUBLIC_BASE_URL, outcome.manageToken)
                : null,
          },
        };
      },
    }),
  ];
}
