import { z } from 'zod';
import { SESSION_STATUSES, type SessionStatus } from '../db/sessionStatus';
import { WEBHOOK_EVENT_GUIDE } from './eventTypes';
import { ENDPOINT_TEST_MESSAGE } from './events';
import { refundSchema } from './refundObject';
import type {
  RefundEvent,
  EndpointDisabledEvent,
  EndpointTestEvent,
  SessionCompletedEvent,
  SessionConfirmingEvent,
  SessionExpiredEvent,
  SessionFailedEvent,
  SessionOverpaidEvent,
  SessionPaidLateEvent,
  SessionUnderpaidEvent,
  SubscriptionCanceledEvent,
  SubscriptionCreatedEvent,
  SubscriptionPaymentFailedEvent,
  SubscriptionRenewedEvent,
} from './events';
import { subscriptionSchema } from '../subscriptions/subscriptionModel';

/**
 * The wire shape of every webhook event body, as zod schemas: the OpenAPI documents' `webhooks`
 * section is generated from them (api/openapi/buildDocument.ts), and the SDK's typed events are
 * generated from that section (sdk/src/generated/), so the contract, the client and the sender agree.
 * One envelope (`id`, `type`, `createdAt`, `data`); `data.session` carries the session with its status
 * when the event was made, `paidAt` and `txHash` null while no deposit was recorded.
 */

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds');
const eventId = z
  .string()
  .regex(/^evt_[0-9a-f-]{36}$/)
  .describe(
    '`evt_<uuid>`: the same on every delivery and resend of the event (also in `X-Service-Event-Id`)',
  );
const usd = z
  .string()
  .regex(/^\d+(\.\d{1,6})?$/)
  .describe('Decimal USD, at most 6 fractional digits');
const wholeTokens = z
  .string()
  .regex(/^\d+(\.\d{1,18})?$/)
  .describe('Decimal string in whole tokens (18 decimals, exact)');
const exactUsd = z
  .string()
  .regex(/^\d+(\.\d{1,18})?$/)
  .describe('Decimal USD, exact: stablecoins at par, as many fractional digits as the tokens have');
const txHash = z.string().regex(/^0x[0-9a-fA-F]{64}$/);

/** `paidAt` and `txHash`: set once a deposit was seen (`session.confirming`), else possibly null. */
const deposited = { paidAt: timestamp, txHash };
const depositIfAny = { paidAt: timestamp.nullable(), txHash: txHash.nullable() };

function eventSession<const Status extends string, Deposit extends z.ZodRawShape>(
  status: Status | readonly Status[],
  deposit: Deposit,
) {
  return z.object({
    id: z.uuid(),
    merchantName: z.string().nullable(),
    amount: usd,
    status: typeof status === 'string' ? z.literal(status) : z.enum(status as readonly [Status, ...Status[]]),
    expiresAt: timestamp,
    createdAt: timestamp,
    ...deposit,
  });
}

function envelope<const Type extends string, Data extends z.ZodType>(type: Type, data: Data) {
  return z.object({ id: eventId, type: z.literal(type), createdAt: timestamp, data });
}

export const sessionConfirmingEventSchema = envelope(
  'session.confirming',
  z.object({ session: eventSession('confirming', deposited) }),
).describe(WEBHOOK_EVENT_GUIDE['session.confirming'].sentWhen);

export const sessionCompletedEventSchema = envelope(
  'session.completed',
  z.object({
    session: eventSession('completed', depositIfAny),
    settlement: z
      .object({
        chainId: z.int().describe('The chain the sUSDe was staked on for the merchant'),
        txHash: txHash.describe('The transaction that staked it'),
        asset: z.literal('sUSDe'),
        assetAmount: wholeTokens.describe('USDe staked, in whole tokens (18 decimals, exact)'),
        shares: wholeTokens.describe(
          'sUSDe shares minted to the merchant, in whole shares (18 decimals, exact)',
        ),
      })
      .describe('What the merchant received, read from the settlement’s on-chain result'),
  }),
).describe(WEBHOOK_EVENT_GUIDE['session.completed'].sentWhen);

export const sessionExpiredEventSchema = envelope(
  'session.expired',
  z.object({ session: eventSession('expired', depositIfAny) }),
).describe(WEBHOOK_EVENT_GUIDE['session.expired'].sentWhen);

export const sessionUnderpaidEventSchema = envelope(
  'session.underpaid',
  z.object({
    session: eventSession('expired', depositIfAny),
    receivedAmount: usd.describe('What arrived before expiry, decimal USD'),
  }),
).describe(WEBHOOK_EVENT_GUIDE['session.underpaid'].sentWhen);

export const sessionFailedEventSchema = envelope(
  'session.failed',
  z.object({ session: eventSession('failed', depositIfAny), failureReason: z.string() }),
).describe(WEBHOOK_EVENT_GUIDE['session.failed'].sentWhen);

export const sessionOverpaidEventSchema = envelope(
  'session.overpaid',
  z.object({
    session: eventSession('completed', depositIfAny),
    receivedAmount: exactUsd.describe('Every transfer into the session at completion, decimal USD, exact'),
    overpaidAmount: exactUsd.describe('What exceeds the amount: receivedAmount − amount, exact'),
  }),
).describe(WEBHOOK_EVENT_GUIDE['session.overpaid'].sentWhen);

/** The statuses a read reports (`pending` is before the session's workflow exists, never shown then). */
const REPORTED_STATUSES = SESSION_STATUSES.filter(
  (status): status is Exclude<SessionStatus, 'pending'> => status !== 'pending',
);

export const sessionPaidLateEventSchema = envelope(
  'session.paid_late',
  z.object({
    session: eventSession(REPORTED_STATUSES, depositIfAny).describe(
      'The session as it was when the late deposit was seen',
    ),
    receivedAmount: exactUsd.describe(
      'Everything the session has received, this deposit included, decimal USD, exact',
    ),
    txHash: txHash.describe('The late deposit’s transaction'),
  }),
).describe(WEBHOOK_EVENT_GUIDE['session.paid_late'].sentWhen);

function refundEventSchema<const Type extends RefundEvent['type']>(type: Type) {
  return envelope(
    type,
    z.object({
      refund: refundSchema.describe('The refund as the API reads it (`claimUrl` null)'),
      session: eventSession(REPORTED_STATUSES, depositIfAny).describe('The session the refund pays back'),
    }),
  ).describe(WEBHOOK_EVENT_GUIDE[type].sentWhen);
}
export const refundSucceededEventSchema = refundEventSchema('refund.succeeded');
export const refundFailedEventSchema = refundEventSchema('refund.failed');

const withSubscription = { subscription: subscriptionSchema };

export const subscriptionCreatedEventSchema = envelope(
  'subscription.created',
  z.object(withSubscription),
).describe(WEBHOOK_EVENT_GUIDE['subscription.created'].sentWhen);

export const subscriptionRenewedEventSchema = envelope(
  'subscription.renewed',
  z.object({
    ...withSubscription,
    session: z
      .object({
        id: z.uuid(),
        amount: usd,
        status: z.string(),
        expiresAt: timestamp,
        createdAt: timestamp,
      })
      .describe('The period’s payment session (its invoice) when the charge was recorded'),
    periodIndex: z.number().int().describe('The period charged, from 0: the charge’s idempotency key'),
    txHash: txHash.describe(
      'The redemption that moved the period’s amount into the session’s deposit address',
    ),
  }),
).describe(WEBHOOK_EVENT_GUIDE['subscription.renewed'].sentWhen);

export const subscriptionPaymentFailedEventSchema = envelope(
  'subscription.payment_failed',
  z.object({
    ...withSubscription,
    failureReason: z
      .string()
      .describe('insufficient_balance, permission_revoked, period_allowance_used, redemption_reverted, …'),
    nextAttemptAt: timestamp.nullable().describe('When the charge is tried again; null when it is not'),
  }),
).describe(WEBHOOK_EVENT_GUIDE['subscription.payment_failed'].sentWhen);

export const subscriptionCanceledEventSchema = envelope(
  'subscription.canceled',
  z.object(withSubscription),
).describe(WEBHOOK_EVENT_GUIDE['subscription.canceled'].sentWhen);

export const endpointDisabledEventSchema = envelope(
  'endpoint.disabled',
  z.object({ endpoint: z.object({ id: z.uuid(), url: z.string(), disabledAt: timestamp }) }),
).describe(WEBHOOK_EVENT_GUIDE['endpoint.disabled'].sentWhen);

export const endpointTestEventSchema = envelope(
  'endpoint.test',
  z.object({
    endpoint: z.object({ id: z.uuid(), url: z.string() }).describe('The endpoint the test was asked for'),
    message: z.literal(ENDPOINT_TEST_MESSAGE),
  }),
).describe(
  'A test you asked for with POST …/webhooks/{id}/send-test-event: a fixed body, signed and retried like any event, sent to that endpoint only. Its deliveries never count toward disabling the endpoint.',
);

/** Every event type with its body's schema and component name, in the order the documents list them. */
export const WEBHOOK_EVENT_SCHEMAS = [
  { type: 'session.confirming', name: 'SessionConfirmingEvent', schema: sessionConfirmingEventSchema },
  { type: 'session.completed', name: 'SessionCompletedEvent', schema: sessionCompletedEventSchema },
  { type: 'session.expired', name: 'SessionExpiredEvent', schema: sessionExpiredEventSchema },
  { type: 'session.underpaid', name: 'SessionUnderpaidEvent', schema: sessionUnderpaidEventSchema },
  { type: 'session.failed', name: 'SessionFailedEvent', schema: sessionFailedEventSchema },
  { type: 'session.overpaid', name: 'SessionOverpaidEvent', schema: sessionOverpaidEventSchema },
  { type: 'session.paid_late', name: 'SessionPaidLateEvent', schema: sessionPaidLateEventSchema },
  { type: 'refund.succeeded', name: 'RefundSucceededEvent', schema: refundSucceededEventSchema },
  { type: 'refund.failed', name: 'RefundFailedEvent', schema: refundFailedEventSchema },
  { type: 'subscription.created', name: 'SubscriptionCreatedEvent', schema: subscriptionCreatedEventSchema },
  { type: 'subscription.renewed', name: 'SubscriptionRenewedEvent', schema: subscriptionRenewedEventSchema },
  {
    type: 'subscription.payment_failed',
    name: 'SubscriptionPaymentFailedEvent',
    schema: subscriptionPaymentFailedEventSchema,
  },
  {
    type: 'subscription.canceled',
    name: 'SubscriptionCanceledEvent',
    schema: subscriptionCanceledEventSchema,
  },
  { type: 'endpoint.disabled', name: 'EndpointDisabledEvent', schema: endpointDisabledEventSchema },
  { type: 'endpoint.test', name: 'EndpointTestEvent', schema: endpointTestEventSchema },
] as const;

// The sender's own event types (webhooks/events.ts) must be exactly these shapes: a drift fails the type check.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const senderTypesAgree: [
  Same<z.infer<typeof sessionConfirmingEventSchema>, SessionConfirmingEvent>,
  Same<z.infer<typeof sessionCompletedEventSchema>, SessionCompletedEvent>,
  Same<z.infer<typeof sessionExpiredEventSchema>, SessionExpiredEvent>,
  Same<z.infer<typeof sessionUnderpaidEventSchema>, SessionUnderpaidEvent>,
  Same<z.infer<typeof sessionFailedEventSchema>, SessionFailedEvent>,
  Same<z.infer<typeof sessionOverpaidEventSchema>, SessionOverpaidEvent>,
  Same<z.infer<typeof sessionPaidLateEventSchema>, SessionPaidLateEvent>,
  Same<z.infer<typeof refundSucceededEventSchema> | z.infer<typeof refundFailedEventSchema>, RefundEvent>,
  Same<z.infer<typeof subscriptionCreatedEventSchema>, SubscriptionCreatedEvent>,
  Same<z.infer<typeof subscriptionRenewedEventSchema>, SubscriptionRenewedEvent>,
  Same<z.infer<typeof subscriptionPaymentFailedEventSchema>, SubscriptionPaymentFailedEvent>,
  Same<z.infer<typeof subscriptionCanceledEventSchema>, SubscriptionCanceledEvent>,
  Same<z.infer<typeof endpointDisabledEventSchema>, EndpointDisabledEvent>,
  Same<z.infer<typeof endpointTestEventSchema>, EndpointTestEvent>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true];
void senderTypesAgree;
