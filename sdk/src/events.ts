import type { webhooks } from './generated/openapi';

/**
 * The webhook events, typed from the contract's `webhooks` section: `WebhookEvent` is a union
 * discriminated by `type`, so `switch (event.type)` narrows `event.data`.
 */
type BodyOf<Type extends keyof webhooks> = webhooks[Type]['post'] extends {
  requestBody: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

export type WebhookEventType = keyof webhooks;
export type WebhookEvent = { [Type in WebhookEventType]: BodyOf<Type> }[WebhookEventType];
/** The event of one type, e.g. `WebhookEventOf<'session.completed'>`. */
export type WebhookEventOf<Type extends WebhookEventType> = Extract<WebhookEvent, { type: Type }>;
