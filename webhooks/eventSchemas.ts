import { z } from 'zod';
import type { EndpointDisabledEvent, SessionConfirmingEvent } from './events';

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
const txHash = z.string().regex(/^0x[0-9a-fA-F]{64}$/);

/** `paidAt` and `txHash`: set once a deposit was seen (`session.confirming`), else possibly null. */
const deposited = { paidAt: timestamp, txHash };
const depositIfAny = { paidAt: timestamp.nullable(), txHash: txHash.nullable() };

function eventSession<const Status extends string, Deposit extends z.ZodRawShape>(
  status: Status,
  deposit: Deposit,
) {
  return z.object({
    id: z.uuid(),
    merchantName: z.string().nullable(),
    amount: usd,
    status: z.literal(status),
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
).describe('A deposit was seen: the session left `awaiting_payment`. Sent at most once per session.');

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
).describe('Settlement was delivered to the merchant (also after a repair). Sent at most once per session.');

export const sessionExpiredEventSchema = envelope(
  'session.expired',
  z.object({ session: eventSession('expired', depositIfAny) }),
).describe('The session expired with no deposit. Sent at most once per session.');

export const sessionUnderpaidEventSchema = envelope(
  'session.underpaid',
  z.object({
    session: eventSession('expired', depositIfAny),
    receivedAmount: usd.describe('What arrived before expiry, decimal USD'),
  }),
).describe('The session expired with a partial deposit. Sent at most once per session.');

export const sessionFailedEventSchema = envelope(
  'session.failed',
  z.object({ session: eventSession('failed', depositIfAny), failureReason: z.string() }),
).describe('Settlement failed; retry-forwarder can repair it. Sent once per failure.');

export const endpointDisabledEventSchema = envelope(
  'endpoint.disabled',
  z.object({ endpoint: z.object({ id: z.uuid(), url: z.string(), disabledAt: timestamp }) }),
).describe(
  'A webhook endpoint was disabled after failing for days; sent to the merchant’s other endpoints that list it.',
);

/** Every event type with its body's schema and component name, in the order the documents list them. */
export const WEBHOOK_EVENT_SCHEMAS = [
  { type: 'session.confirming', name: 'SessionConfirmingEvent', schema: sessionConfirmingEventSchema },
  { type: 'session.completed', name: 'SessionCompletedEvent', schema: sessionCompletedEventSchema },
  { type: 'session.expired', name: 'SessionExpiredEvent', schema: sessionExpiredEventSchema },
  { type: 'session.underpaid', name: 'SessionUnderpaidEvent', schema: sessionUnderpaidEventSchema },
  { type: 'session.failed', name: 'SessionFailedEvent', schema: sessionFailedEventSchema },
  { type: 'endpoint.disabled', name: 'EndpointDisabledEvent', schema: endpointDisabledEventSchema },
] as const;

// The sender's own event types (webhooks/events.ts) must be exactly these shapes: a drift fails the type check.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const senderTypesAgree: [
  Same<z.infer<typeof sessionConfirmingEventSchema>, SessionConfirmingEvent>,
  Same<z.infer<typeof endpointDisabledEventSchema>, EndpointDisabledEvent>,
] = [true, true];
void senderTypesAgree;
