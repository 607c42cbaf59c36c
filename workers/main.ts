import { NativeConnection } from '@temporalio/worker';
import { ConfigError, loadConfigOrExit, requireSetting } from '../config';
import { createDb } from '../db/client';
import { createWorkers } from './createWorkers';

/**
 * The `worker` process (`npm run worker`): connects to Temporal and Postgres, polls every task
 * queue, and on SIGINT or SIGTERM lets in-flight tasks finish before closing its connections.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const db = createDb({ connectionString: requireSetting(config, 'DATABASE_URL') });
  try {
    const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    try {
      const workers = await createWorkers({
        connection,
        namespace: config.TEMPORAL_NAMESPACE,
        dependencies: { db },
      });
      process.stdout.write(
        `worker polling ${[...workers.byTaskQueue.keys()].join(', ')} on ${config.TEMPORAL_ADDRESS} ` +
          `(namespace ${config.TEMPORAL_NAMESPACE})\n`,
      );
      // The worker runtime turns SIGINT/SIGTERM into a graceful shutdown; run() resolves after it.
      await workers.run();
      process.stdout.write('worker stopped\n');
    } finally {
      await connection.close();
    }
  } finally {
    await db.destroy();
  }
}

main().catch((error: unknown) => {
  const detail =
    error instanceof ConfigError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`worker failed: ${detail}\n`);
  process.exit(1);
});
