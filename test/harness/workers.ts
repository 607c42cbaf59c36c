import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createDb, type Db } from '../../db/client';
import { createWorkers, type WebhookWorkerSettings } from '../../workers/createWorkers';
import { taskQueueNames, type TaskQueueRole } from '../../workflows/taskQueues';
import { testStack } from './stack';

/** Quiet worker logs (problems only); must run before the first Worker or test environment of the process. */
export function quietTemporalRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already instantiated by an earlier worker or environment in this process.
  }
}

export interface TestWorkers {
  /** Pass to `startTestApp({ TEMPORAL_TASK_QUEUE_PREFIX: prefix })` so the app starts workflows on these queues. */
  prefix: string;
  taskQueues: Record<TaskQueueRole, string>;
  client: Client;
  db: Db;
  stop(): Promise<void>;
}

/**
 * The project's own workers on the run's Temporal dev server, on task queues unique to the caller;
 * `webhooks` lets them deliver to a loopback receiver (allowPrivateTargets).
 */
export async function startTestWorkers({
  webhooks,
}: { webhooks?: WebhookWorkerSettings } = {}): Promise<TestWorkers> {
  quietTemporalRuntime();
  const stack = testStack();
  const prefix = `t${randomBytes(4).toString('hex')}-`;
  const taskQueues = taskQueueNames(prefix);
  const db = createDb({ connectionString: stack.databaseUrl, maxConnections: 5 });
  const clientConnection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection: clientConnection, namespace: stack.temporalNamespace });
  const workerConnection = await NativeConnection.connect({ address: stack.temporalAddress });
  const workers = await createWorkers({
    connection: workerConnection,
    namespace: stack.temporalNamespace,
    dependencies: { db, temporal: client, webhooks },
    taskQueues,
  });
  const running = workers.run();
  return {
    prefix,
    taskQueues,
    client,
    db,
    async stop() {
      await workers.shutdown();
      await running;
      await workerConnection.close();
      await clientConnection.close();
      await db.destroy();
    },
  };
}
