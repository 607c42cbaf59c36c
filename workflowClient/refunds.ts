import type { Client } from '@temporalio/client';
import { refundChangedSignal, refundWorkflow } from '../workflows/refund';
import { MerchantId } from '../workflows/searchAttributes';
import { refundWorkflowId } from '../workflows/workflowIds';

/**
 * Tells a refund's workflow that its row changed, starting the workflow first when it has none
 * (signal-with-start): creation and every later change go through here, so a start lost to a Temporal
 * outage is made good by the next change.
 */
export async function signalRefundChanged(
  client: Client,
  { refundId, merchantId, taskQueue }: { refundId: string; merchantId: string; taskQueue: string },
): Promise<void> {
  await client.workflow.signalWithStart(refundWorkflow, {
    workflowId: refundWorkflowId(refundId),
    taskQueue,
    args: [{ refundId }],
    signal: refundChangedSignal,
    signalArgs: [],
    typedSearchAttributes: [{ key: MerchantId, value: merchantId }],
  });
}
