import { proxyActivities } from '@temporalio/workflow';

/** Test-only workflow: one attempt of an activity that calls an RPC that does not answer. */
export async function callDeadRpcWorkflow(rpcUrl: string): Promise<void> {
  const { readBlockNumber } = proxyActivities<{ readBlockNumber(rpcUrl: string): Promise<string> }>({
    startToCloseTimeout: '30 seconds',
    retry: { maximumAttempts: 1 },
  });
  await readBlockNumber(rpcUrl);
}
