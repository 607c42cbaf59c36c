import { z } from 'zod';
import { SUBSCRIPTION_STATUSES } from '../../subscriptions/subscriptionModel';
import { accountName } from '../personConfirmation';
import { type AnyToolDefinition, routeTool, segment } from '../toolDefinition';
import type { UntrustedFields } from '../untrustedData';

/**
 * Subscription plans and subscriptions (issue 42), under `/v1/merchants/me`:
 * | list_plans          | GET  /plans                      |
 * | get_plan            | GET  /plans/{id}                 |
 * | create_plan         | POST /plans                      |
 * | archive_plan        | POST /plans/{id}/archive         |
 * | list_subscriptions  | GET  /subscriptions?planId&status |
 * | get_subscription    | GET  /subscriptions/{id}         |
 * | cancel_subscription | POST /subscriptions/{id}/cancel  | confirmed by the person |
 * A plan moves no money until a customer grants a permission on its page, and archiving one only stops new
 * subscribers (like creating a session, neither hands anything over): no confirmation. Canceling ends a
 * customer's paid service and the merchant's income from it, at once or at the period's end: confirmed.
 */
const planId = z.string().describe('the plan’s id (UUID), from list_plans');
const subscriptionId = z.string().describe('the subscription’s id (UUID), from list_subscriptions');

/** The account that granted the permission is the subscriber's choice, not the merchant's. */
const subscriberAccount = (prefix: string): UntrustedFields => ({
  paths: [`${prefix}customerAccount`],
  origin: 'the subscriber, who granted the periodic permission from that account',
});

export const subscriptionTools: AnyToolDefinition[] = [
  routeTool({
    name: 'list_plans',
    description:
      'List the subscription plans, newest first, archived ones included, each with its subscribeUrl.',
    inputSchema: {},
    auth: 'jwt',
    method: 'GET',
    path: '/v1/merchants/me/plans',
  }),

  routeTool({
    name: 'get_plan',
    description: 'Read one subscription plan.',
    inputSchema: { id: planId },
    auth: 'jwt',
    method: 'GET',
    path: ({ id }) => `/v1/merchants/me/plans/${segment(id)}`,
  }),

  routeTool({
    name: 'create_plan',
    description:
      'Create a subscription plan: a USD amount charged every intervalCount intervals after optional trial days; customers subscribe at its subscribeUrl.',
    inputSchema: {
      name: z.string(),
      amount: z.string().describe('decimal USD per period, e.g. "9.99"'),
      interval: z.enum(['day', 'week', 'month']),
      intervalCount: z.number().int().optional().describe('1 to 12; default 1'),
      trialDays: z.number().int().optional().describe('0 to 90; default 0'),
    },
    auth: 'jwt',
    method: 'POST',
    path: '/v1/merchants/me/plans',
    body: (input) => input,
  }),

  routeTool({
    name: 'archive_plan',
    description:
      'Archive a plan: nobody new can subscribe (there is no unarchive); its subscriptions keep charging until canceled.',
    inputSchema: { id: planId },
    auth: 'jwt',
    method: 'POST',
    path: ({ id }) => `/v1/merchants/me/plans/${segment(id)}/archive`,
    annotations: { destructiveHint: true },
  }),

  routeTool({
    name: 'list_subscriptions',
    description: 'List subscriptions, newest first, optionally of one plan and in one status.',
    inputSchema: { planId: planId.optional(), status: z.enum(SUBSCRIPTION_STATUSES).optional() },
    auth: 'jwt',
    method: 'GET',
    path: '/v1/merchants/me/subscriptions',
    query: (input) => input,
    untrusted: [subscriberAccount('data.*.')],
  }),

  routeTool({
    name: 'get_subscription',
    description:
      'Read one subscription: status, current period, whether it cancels at the period’s end, the latest period’s session.',
    inputSchema: { id: subscriptionId },
    auth: 'jwt',
    method: 'GET',
    path: ({ id }) => `/v1/merchants/me/subscriptions/${segment(id)}`,
    untrusted: [subscriberAccount('')],
  }),

  routeTool({
    name: 'cancel_subscription',
    description:
      'Cancel a subscription at once, or with atPeriodEnd true when its current period ends (needs the person’s confirmation). Nothing is charged after.',
    inputSchema: {
      id: subscriptionId,
      atPeriodEnd: z.boolean().optional().describe('true: at the current period’s end; default: at once'),
    },
    auth: 'jwt',
    method: 'POST',
    path: ({ id }) => `/v1/merchants/me/subscriptions/${segment(id)}/cancel`,
    body: ({ atPeriodEnd }) => (atPeriodEnd === undefined ? {} : { atPeriodEnd }),
    untrusted: [subscriberAccount('')],
    annotations: { destructiveHint: true },
    confirmation: async ({ id, atPeriodEnd }, { credentials }) =>
      `Cancel subscription ${id} of ${await accountName(credentials)} ${atPeriodEnd === true ? 'at the end of its current period' : 'at once'}: no further period is charged, and it cannot be resumed`,
  }),
];
