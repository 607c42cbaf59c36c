/**
 * Task queues by the kind of work they carry, so each can get its own worker replicas (docs/architecture.md "Processes").
 * Clients that start workflows and the workers that poll must use the same names.
 */
export const TASK_QUEUES = {
  sessions: 'payment-sessions',
  webhooks: 'webhook-deliveries',
  chains: 'chain-monitors',
  billing: 'billing',
  /** Housekeeping on schedules: expired login nonces, and later other sweeps. */
  maintenance: 'maintenance',
  /** Yield deployments: vault-set deployment and custom-domain verification. */
  yield: 'yield-deployments',
} as const;

export type TaskQueueRole = keyof typeof TASK_QUEUES;

/** The task queue names of a deployment: `TASK_QUEUES` behind its TEMPORAL_TASK_QUEUE_PREFIX. */
export function taskQueueNames(prefix: string): Record<TaskQueueRole, string> {
  return Object.fromEntries(
    Object.entries(TASK_QUEUES).map(([role, name]) => [role, `${prefix}${name}`]),
  ) as Record<TaskQueueRole, string>;
}
