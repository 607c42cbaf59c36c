import { WorkflowExecutionAlreadyStartedError, type Client, type Workflow } from '@temporalio/client';
import { ChainId } from '../workflows/searchAttributes';

/**
 * Starts one long-running workflow per chain (deposit monitors, receipt trackers) unless it is
 * already running; idempotent, so every worker runs it at boot. Returns the workflow ids.
 */
export async function startPerChainWorkflows<Input>(
  client: Client,
  {
    chainIds,
    taskQueue,
    workflow,
    workflowIdOf,
    inputOf,
  }: {
    chainIds: number[];
    taskQueue: string;
    workflow: (input: Input) => Promise<unknown>;
    workflowIdOf: (chainId: number) => string;
    inputOf: (chainId: number, workflowId: string) => Input;
  },
): Promise<string[]> {
  const ids: string[] = [];
  for (const chainId of chainIds) {
    const workflowId = workflowIdOf(chainId);
    try {
      await client.workflow.start(workflow as Workflow, {
        workflowId,
        taskQueue,
        args: [inputOf(chainId, workflowId)],
        typedSearchAttributes: [{ key: ChainId, value: chainId }],
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    ids.push(workflowId);
  }
  return ids;
}
