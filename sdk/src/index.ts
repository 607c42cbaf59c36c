export { createStablePayClient, type StablePayClient, type StablePayOptions } from './client';
export { StablePayError, type ApiErrorBody, type FieldError } from './errors';
export type { RetryOptions, RequestDefaults } from './retryingFetch';
export type { WebhookEvent, WebhookEventOf, WebhookEventType } from './events';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookVerificationFailure,
} from './verifyWebhook';
export type { paths, components, operations, webhooks } from './generated/openapi';
