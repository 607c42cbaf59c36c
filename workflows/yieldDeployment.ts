import { proxyActivities } from '@temporalio/workflow';
import type { YieldDeploymentActivities } from '../activities/yieldDeployments';

/**
 * `yield-deployment-<id>` (docs/yield.md "3. Deploy the vaults"), started by POST /{id}/deploy with the deployment `deploying`:
 *
 *   deploy the vault set (one factory transaction) ─mined─▶ store the contract set ─▶ active
 *                                                  └reverted─▶ failed (with the revert reason)
 *
 * Either end first settles the deploy's charge at the transaction's actual cost (0 when nothing was mined):
 * the chain's daily budget and, on a mainnet, the merchant's prepaid balance (db/yieldDeployCharges.ts).
 *
 * The deploy step is idempotent (activities/yieldDeployments.ts), so Temporal may retry it, or run it on
 * another worker after a crash, without a second set ever being made.
 */

const { deployVaultSet } = proxyActivities<YieldDeploymentActivities>({
  // One attempt waits up to two minutes for the receipt; heartbeats show it is alive meanwhile.
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const { activateYieldDeployment, failYieldDeployment } = proxyActivities<YieldDeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export interface YieldDeploymentResult {
  status: 'active' | 'failed' | 'not_deploying';
  contractSetId?: string;
  reason?: string;
}

export async function yieldDeploymentWorkflow({
  deploymentId,
}: {
  deploymentId: string;
}): Promise<YieldDeploymentResult> {
  const outcome = await deployVaultSet({ deploymentId });
  if (outcome.status === 'not_deploying') return { status: 'not_deploying' };
  if (outcome.status === 'reverted') {
    await failYieldDeployment({
      deploymentId,
      reason: outcome.reason,
      ...(outcome.txHash !== undefined && { txHash: outcome.txHash }),
      gasCostWei: outcome.gasCostWei,
    });
    return { status: 'failed', reason: outcome.reason };
  }
  const { contractSetId } = await activateYieldDeployment({
    deploymentId,
    txHash: outcome.txHash,
    vaults: outcome.vaults,
    deployedAt: outcome.deployedAt,
    gasCostWei: outcome.gasCostWei,
  });
  return { status: 'active', contractSetId };
}
