import type { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { ConfigError, lateWatchSecByChain, loadConfigOrExit, requireSetting } from '../config';
import { createMonitorMetrics, type MonitorMetrics } from './monitorMetrics';
import { boundedWaitsFrom, createDb, type Db } from '../db/client';
import { checkReadiness, postgresCheck, startReadinessServer, temporalCheck } from '../health/readiness';
import { createWebhookSecretBox, webhookSecretKeyFromConfig } from '../webhooks/webhookSecrets';
import { createNetworkRegistry, type NetworkRegistry } from '../chain/networkRegistry';
import { createOperatorChains, type OperatorChains } from '../chain/operatorChains';
import { startChainMonitors } from '../workflowClient/chainMonitors';
import { ensureMaintenanceSchedules } from '../workflowClient/schedules';
import { startPaymasterReceiptTrackers } from '../workflowClient/paymasterReceiptTrackers';
import { createTxtLookup } from '../yield/txtRecords';
import { createLogger } from '../logging/logger';
import { createMailer } from '../mail/mailer';
import { ourPaymasters } from '../activities/paymasterReceipts';
import type { BridgeDeliveryFactory } from '../activities/bridgeDelivery';
import { createWorkers } from './createWorkers';
import { createPublicClients } from '../chain/publicClients';
import { createEthUsdPrices } from '../paymaster/pricing/prices';
import type { RedemptionGasPricing } from '../activities/subscriptions';
import { WORKER_SETTING_CHECKS } from './settingChecks';
import { missingMemorySettings } from './processMemory';
import { createTemporalClient, ensureSearchAttributes, temporalTargetOf } from '../workflowClient/connection';
import { taskQueueNames } from '../workflows/taskQueues';

export interface RunWorkerOptions {
  /** Bridge deliveries beside LayerZero's: the local stack's stand-in (dev/worker.ts); none in production. */
  bridgeDeliveries?: readonly BridgeDeliveryFactory[];
}

/**
 * The `worker` process (`npm run worker`, workers/main.ts): connects to Temporal and Postgres, polls
 * every task queue, and on SIGINT or SIGTERM lets in-flight tasks finish before closing its connections.
 */
export async function runWorker({ bridgeDeliveries }: RunWorkerOptions = {}): Promise<void> {
  const config = loadConfigOrExit(process.env, WORKER_SETTING_CHECKS);
  warnAboutMissingMemorySettings();
  exitAfterStopDeadline(config.WORKER_STOP_DEADLINE_MS);
  const db = createDb({
    connectionString: requireSetting(config, 'DATABASE_URL'),
    ...boundedWaitsFrom(config),
    onIdleError: (error) => process.stderr.write(`idle database connection lost: ${error.message}\n`),
  });
  // Loaded only when configured: with tracing off, no OpenTelemetry module is even imported.
  const tracing = config.OTEL_EXPORTER_OTLP_ENDPOINT
    ? (await import('../tracing/tracing')).startTracing({
        endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
        serviceName: 'stablepay-worker',
      })
    : undefined;
  try {
    const { address, tls } = temporalTargetOf(config);
    const connection = await NativeConnection.connect({ address, tls });
    try {
      const temporalClient = await createTemporalClient({
        ...temporalTargetOf(config),
        interceptors: tracing?.workflowClientInterceptors,
      });
      const temporal = temporalClient.client;
      const registered = await ensureSearchAttributes(temporalClient.connection, config.TEMPORAL_NAMESPACE);
      if (registered.length) process.stdout.write(`registered search attributes: ${registered.join(', ')}\n`);
      const taskQueues = taskQueueNames(config.TEMPORAL_TASK_QUEUE_PREFIX);
      const networks = createNetworkRegistry(config);
      const metrics = createMonitorMetrics();
      const settlement = config.OPERATOR_PRIVATE_KEY
        ? {
            networks,
            operator: createOperatorChains({
              networks,
              operatorPrivateKey: config.OPERATOR_PRIVATE_KEY as `0x${string}`,
            }),
            slippageBps: config.SETTLEMENT_SLIPPAGE_BPS,
            bridgeDeliveries,
            monitorIdPrefix: config.TEMPORAL_TASK_QUEUE_PREFIX,
            addressesPerRequest: config.CHAIN_MONITOR_ADDRESSES_PER_REQUEST,
            lateWatchSec: config.CHAIN_MONITOR_LATE_WATCH_SEC,
            lateWatchSecByChain: lateWatchSecByChain(config),
            filteredMaxWatched: config.CHAIN_MONITOR_FILTERED_MAX_WATCHED,
            cycleMs: config.CHAIN_MONITOR_CYCLE_MS,
            onScanned: metrics.onScanned,
          }
        : undefined;
      // Vault deploys are paid by their own account (never the settlement operator's key or nonces).
      const yieldDeployer = config.YIELD_DEPLOYER_PRIVATE_KEY
        ? createOperatorChains({
            networks,
            operatorPrivateKey: config.YIELD_DEPLOYER_PRIVATE_KEY as `0x${string}`,
          })
        : undefined;
      const subscriptionExecutor = subscriptionExecutorOf(config, networks);
      const workers = await createWorkers({
        connection,
        namespace: config.TEMPORAL_NAMESPACE,
        dependencies: {
          db,
          temporal,
          webhooks: {
            secrets: createWebhookSecretBox(webhookSecretKeyFromConfig(config)),
            allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
            mailer: createMailer({
              config,
              logger: createLogger({ level: config.LOG_LEVEL, name: 'worker-mail' }),
            }),
          },
          settlement,
          paymasterReceipts: {
            networks,
            markupBps: config.PAYMASTER_MARKUP_BPS,
            cycleMs: config.CHAIN_MONITOR_CYCLE_MS,
          },
          yield: { deployer: yieldDeployer, lookupTxt: createTxtLookup(config.YIELD_DNS_SERVER) },
          subscriptions: {
            networks,
            executor: subscriptionExecutor,
            redemptionGas: redemptionGasPricingOf(config, networks),
          },
        },
        taskQueues,
        tracing,
      });
      await startLongRunningWorkflows(temporal, config, { networks, settlement: settlement !== undefined });
      if (!yieldDeployer) {
        process.stdout.write('YIELD_DEPLOYER_PRIVATE_KEY unset: no yield vault deploys on this worker\n');
      }
      process.stdout.write(
        `worker polling ${[...workers.byTaskQueue.keys()].join(', ')} on ${config.TEMPORAL_ADDRESS} ` +
          `(namespace ${config.TEMPORAL_NAMESPACE})\n`,
      );
      const readiness = await startWorkerReadiness(config, { db, temporal, workers, metrics });
      // The worker runtime turns SIGINT/SIGTERM into a graceful shutdown; run() resolves after it.
      await workers.run();
      await readiness?.close();
      await temporalClient.close();
      process.stdout.write('worker stopped\n');
    } finally {
      await connection.close();
    }
  } finally {
    await db.destroy();
    await tracing?.shutdown();
  }
}

type WorkerConfig = ReturnType<typeof loadConfigOrExit>;

/** Subscription charges are sent by their own key (never the operator's or the yield deployer's). */
function subscriptionExecutorOf(config: WorkerConfig, networks: NetworkRegistry): OperatorChains | undefined {
  if (!config.SUBSCRIPTION_EXECUTOR_PRIVATE_KEY) {
    process.stdout.write(
      'SUBSCRIPTION_EXECUTOR_PRIVATE_KEY unset: due subscription charges fail on this worker\n',
    );
    return undefined;
  }
  const executor = createOperatorChains({
    networks,
    operatorPrivateKey: config.SUBSCRIPTION_EXECUTOR_PRIVATE_KEY as `0x${string}`,
  });
  process.stdout.write(`subscription executor ${executor.address}\n`);
  return executor;
}

/**
 * The workflows that run for as long as the worker does: the maintenance schedules (under the worker's
 * task-queue prefix), a paymaster receipt tracker per chain with our paymasters, and a deposit monitor
 * per settlement chain when this worker settles.
 */
async function startLongRunningWorkflows(
  temporal: Client,
  config: WorkerConfig,
  { networks, settlement }: { networks: NetworkRegistry; settlement: boolean },
): Promise<void> {
  const prefix = config.TEMPORAL_TASK_QUEUE_PREFIX;
  // The schedules (session reconciler, nonce cleanup, statements, balance check) are the worker's to
  // keep, as its monitors are: a deployment that only runs workers must have them (idempotent per start).
  const schedules = await ensureMaintenanceSchedules(temporal, {
    taskQueues: taskQueueNames(prefix),
    idPrefix: prefix,
  });
  process.stdout.write(`maintenance schedules: ${schedules.join(', ')}\n`);
  const taskQueue = taskQueueNames(prefix).chains;
  const receiptTrackers = await startPaymasterReceiptTrackers(temporal, {
    chainIds: networks
      .all()
      .filter((network) => network.rpcUrl && ourPaymasters(network.contracts).length > 0)
      .map((network) => network.chainId),
    taskQueue,
    workflowIdPrefix: config.TEMPORAL_TASK_QUEUE_PREFIX,
    pollIntervalMs: config.CHAIN_MONITOR_POLL_MS,
    maxBlockRange: config.CHAIN_MONITOR_MAX_BLOCK_RANGE,
  });
  process.stdout.write(`paymaster receipt trackers running: ${receiptTrackers.join(', ') || 'none'}\n`);
  if (!settlement) {
    process.stdout.write('OPERATOR_PRIVATE_KEY unset: no deposit monitors or settlement on this worker\n');
    return;
  }
  const monitors = await startChainMonitors(temporal, {
    chainIds: networks
      .all()
      .filter((network) => network.rpcUrl && network.forwarderFactory)
      .map((network) => network.chainId),
    taskQueue,
    workflowIdPrefix: config.TEMPORAL_TASK_QUEUE_PREFIX,
    pollIntervalMs: config.CHAIN_MONITOR_POLL_MS,
    maxBlockRange: config.CHAIN_MONITOR_MAX_BLOCK_RANGE,
  });
  process.stdout.write(`deposit monitors running: ${monitors.join(', ') || 'none'}\n`);
}

/**
 * Readiness for an orchestrator (WORKER_READY_PORT): Postgres, the Temporal frontend, and every worker
 * still running; and the worker's /metrics (the deposit monitors' lag) on the same port.
 */
async function startWorkerReadiness(
  config: WorkerConfig,
  {
    db,
    temporal,
    workers,
    metrics,
  }: {
    db: Db;
    temporal: Client;
    workers: Awaited<ReturnType<typeof createWorkers>>;
    metrics: MonitorMetrics;
  },
): Promise<Awaited<ReturnType<typeof startReadinessServer>> | undefined> {
  if (!config.WORKER_READY_PORT) return undefined;
  const readiness = await startReadinessServer({
    port: config.WORKER_READY_PORT,
    metrics: { contentType: metrics.registry.contentType, text: () => metrics.registry.metrics() },
    readiness: () =>
      checkReadiness(
        [
          postgresCheck(db),
          temporalCheck(temporal, config.READY_CHECK_TIMEOUT_MS),
          {
            name: 'workers',
            check: async () => {
              const stopped = [...workers.byTaskQueue].filter(
                ([, worker]) => worker.getState() !== 'RUNNING',
              );
              if (stopped.length)
                throw Object.assign(new Error('stopped'), {
                  name: `not running: ${stopped.map(([queue]) => queue).join(', ')}`,
                });
            },
          },
        ],
        config.READY_CHECK_TIMEOUT_MS,
      ),
  });
  process.stdout.write(`worker readiness on ${readiness.url}/ready\n`);
  return readiness;
}

/** Prints why the worker could not run (a configuration error's own words) and exits non-zero. */
export function exitOnWorkerFailure(error: unknown): never {
  const detail =
    error instanceof ConfigError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`worker failed: ${detail}\n`);
  process.exit(1);
}

/** The executor's redemption gas is billed like sponsored gas: the paymaster's price feeds and markup. */
function redemptionGasPricingOf(config: WorkerConfig, networks: NetworkRegistry): RedemptionGasPricing {
  const prices = createEthUsdPrices({
    config,
    publicClients: createPublicClients(networks),
    networks,
    logger: createLogger({ level: config.LOG_LEVEL, name: 'worker-gas-prices' }),
  });
  return {
    markupBps: config.PAYMASTER_MARKUP_BPS,
    ethUsdAnswer: async (chainId) => (await prices.fresh(chainId))?.answer,
  };
}

function warnAboutMissingMemorySettings(): void {
  const missingMemory = missingMemorySettings();
  if (missingMemory.length)
    process.stderr.write(
      `worker started without ${missingMemory.join(' ')}: after a load it keeps hundreds of MiB more ` +
        '(workers/processMemory.ts, docs/operations.md "Worker memory")\n',
    );
}

/**
 * The runtime drains in-flight tasks on SIGINT/SIGTERM (Worker.shutdown: polling stops, tasks finish); if
 * Temporal itself is gone the drain cannot finish, so never outlive the signal by more than the deadline.
 */
function exitAfterStopDeadline(deadlineMs: number): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stdout.write(`worker stopping (${signal}): no new tasks, finishing those in flight\n`);
      setTimeout(() => {
        process.stderr.write(`worker stop deadline (${deadlineMs} ms) passed: exiting\n`);
        process.exit(1);
      }, deadlineMs).unref();
    });
  }
}
