/**
 * Every workflow id and schedule id our code uses, in one place: operators search the Temporal UI by
 * them, and the client side (workflowClient/) and the workers must agree on each. Pure declarations.
 */

/** One payment-session workflow per session (docs/architecture.md "Processes"). */
export const sessionWorkflowId = (sessionId: string) => `session-${sessionId}`;

/** One charging workflow per subscription (docs/operations.md "Subscriptions"), across its periods. */
export const subscriptionWorkflowId = (subscriptionId: string) => `subscription-${subscriptionId}`;
/** One workflow per refund: waits for its address, payment and confirmations (workflows/refund.ts). */
export const refundWorkflowId = (refundId: string) => `refund-${refundId}`;

/** One delivery workflow per (event, endpoint) pair. */
export const webhookDeliveryWorkflowId = (eventId: string, endpointId: string) =>
  `webhook-${eventId}-${endpointId}`;

/** A resend of one delivery (docs/decisions.md "Webhook delivery operations"): a workflow of its own beside the pair's, keyed by the new delivery. */
export const webhookResendWorkflowId = (eventId: string, endpointId: string, deliveryId: string) =>
  `webhook-${eventId}-${endpointId}-resend-${deliveryId}`;

/** The deposit monitor of a chain; `prefix` is the deployment's task-queue prefix, so test runs do not share one. */
export const chainMonitorWorkflowId = (chainId: number, prefix = '') => `${prefix}chain-monitor-${chainId}`;

/** The paymaster receipt tracker of a chain; prefixed like the chain monitor. */
export const paymasterReceiptTrackerWorkflowId = (chainId: number, prefix = '') =>
  `${prefix}paymaster-receipts-${chainId}`;

/** One deployment workflow per yield deployment; a failed one deployed again reuses it. */
export const yieldDeploymentWorkflowId = (deploymentId: string) => `yield-deployment-${deploymentId}`;

/** One verification workflow per custom yield domain. */
export const yieldDomainWorkflowId = (domainId: string) => `yield-domain-${domainId}`;

/** The watch a verified custom yield domain hands over to: it rechecks the record until the domain lapses. */
export const yieldDomainWatchWorkflowId = (domainId: string) => `yield-domain-watch-${domainId}`;

export const LOGIN_NONCE_CLEANUP_SCHEDULE_ID = 'login-nonce-cleanup';
export const SESSION_RECONCILER_SCHEDULE_ID = 'session-reconciler';
export const MONTHLY_STATEMENTS_SCHEDULE_ID = 'monthly-statements';
export const PREPAID_BALANCE_CHECK_SCHEDULE_ID = 'prepaid-balance-check';

/**
 * A schedule's id as created, and the id of the workflow each of its runs starts: the schedule's name,
 * prefixed like the chain monitor so test runs do not share one.
 */
export const scheduleWorkflowId = (scheduleId: string, prefix = '') => `${prefix}${scheduleId}`;
