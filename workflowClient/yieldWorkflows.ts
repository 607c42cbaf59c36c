import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { yieldDeploymentWorkflow } from '../workflows/yieldDeployment';
import { yieldDomainVerificationWorkflow } from '../workflows/yieldDomainVerification';
import { ChainId, MerchantId, SandboxMode } from '../workflows/searchAttributes';
import { yieldDeploymentWorkflowId, yieldDomainWorkflowId } from '../workflows/workflowIds';

/**
 * Starts `yield-deployment-<id>` with the merchant, chain and sandbox search attributes. A failed
 * deployment deployed again reuses the id (the earlier run has closed); a run still open counts as started.
 */
export async function startYieldDeploymentWorkflow(
  client: Client,
  {
    deploymentId,
    merchantId,
    chainId,
    sandbox,
    taskQueue,
  }: { deploymentId: string; merchantId: string; chainId: number; sandbox: boolean; taskQueue: string },
): Promise<'started' | 'already_started'> {
  try {
    await client.workflow.start(yieldDeploymentWorkflow, {
      workflowId: yieldDeploymentWorkflowId(deploymentId),
      taskQueue,
      args: [{ deploymentId }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      typedSearchAttributes: [
        { key: MerchantId, value: merchantId },
        { key: ChainId, value: chainId },
        { key: SandboxMode, value: sandbox },
      ],
    });
    return 'started';
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return 'already_started';
    throw error;
  }
}

/**
 * Starts `yield-domain-<domainId>`, which checks the domain's TXT record until verified or seven days pass,
 * then leaves `yield-domain-watch-<domainId>` re-checking it while it stays verified.
 */
export async function startDomainVerificationWorkflow(
  client: Client,
  {
    domainId,
    merchantId,
    createdAt,
    pollIntervalMs,
    recheckIntervalMs,
    lapseGraceMs,
    taskQueue,
  }: {
    domainId: string;
    merchantId: string;
    createdAt: Date;
    pollIntervalMs: number;
    recheckIntervalMs: number;
    lapseGraceMs: number;
    taskQueue: string;
  },
): Promise<void> {
  await client.workflow.start(yieldDomainVerificationWorkflow, {
    workflowId: yieldDomainWorkflowId(domainId),
    taskQueue,
    args: [{ domainId, createdAt: createdAt.toISOString(), pollIntervalMs, recheckIntervalMs, lapseGraceMs }],
    typedSearchAttributes: [{ key: MerchantId, value: merchantId }],
  });
}
