export { createStablePayClient, type StablePayClient, type StablePayOptions } from './client';
export { PaymasterRpcError, StablePayError, type ApiErrorBody, type FieldError } from './errors';
export type { CreateOptions } from './calls';
export type { SponsorshipPolicyMatch, UserOperationRequest } from './paymasterPolicies';
export type { RetryOptions, RequestDefaults } from './retryingFetch';
export type { WebhookEvent, WebhookEventOf, WebhookEventType } from './events';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookVerificationFailure,
} from './verifyWebhook';
export type { paths, components, operations, webhooks } from './generated/openapi';
