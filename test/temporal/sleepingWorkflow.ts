import { sleep } from '@temporalio/workflow';

/** Test-only workflow: waits two hours of workflow time and reports how much workflow time passed. */
export async function sleepTwoHoursWorkflow(): Promise<{ sleptMs: number }> {
  const startedAt = Date.now();
  await sleep('2 hours');
  return { sleptMs: Date.now() - startedAt };
}
