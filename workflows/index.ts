/**
 * Every workflow the workers register; the worker bundles this file (`workflowsPath`).
 * Workflow code only: deterministic, no I/O, nothing with side effects at import.
 */
export { loginNonceCleanupWorkflow } from './loginNonceCleanup';
export { paymentSessionWorkflow } from './paymentSession';
export { subscriptionWorkflow } from './subscription';
export { refundWorkflow } from './refund';
export { sessionReconcilerWorkflow } from './sessionReconciler';
export { webhookDeliveryWorkflow } from './webhookDelivery';
export { chainMonitorWorkflow } from './chainMonitor';
export { paymasterReceiptTrackerWorkflow } from './paymasterReceipts';
export { monthlyStatementsWorkflow } from './monthlyStatements';
export { prepaidBalanceCheckWorkflow } from './prepaidBalanceCheck';
export { yieldDeploymentWorkflow } from './yieldDeployment';
export { yieldDomainVerificationWorkflow, yieldDomainWatchWorkflow } from './yieldDomainVerification';
