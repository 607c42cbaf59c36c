import {
  bundleWorkflowCode,
  Runtime,
  Worker,
  type ActivityInterceptorsFactory,
  type NativeConnection,
  type WorkerOptions,
  type WorkflowBundle,
} from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { createBillingStatementActivities } from '../activities/billingStatements';
import { createChainMonitorActivities, type ChainMonitorDependencies } from '../activities/chainMonitor';
import { createLoginNonceActivities } from '../activities/loginNonces';
import { createPaymasterReceiptActivities } from '../activities/paymasterReceipts';
import { createPrepaidBalanceActivities } from '../activities/prepaidBalances';
import type { BridgeDeliveryFactory } from '../activities/bridgeDelivery';
import { createSettlementActivities } from '../activities/settlement';
import { createRefundActivities } from '../activities/refunds';
import { createPublicClients } from '../chain/publicClients';
import type { NetworkRegistry } from '../chain/networkRegistry';
import { withRedactedProviderUrls } from '../logging/providerUrlRedaction';
import type { OperatorChains } from '../chain/operatorChains';
import { createSessionReconcilerActivities } from '../activities/sessionReconciler';
import { createYieldDeploymentActivities } from '../activities/yieldDeployments';
import { createYieldDomainActivities } from '../activities/yieldDomains';
import { createTxtLookup, type TxtLookup } from '../yield/txtRecords';
import { createSessionActivities } from '../activities/sessions';
import { createSessionEventActivities, startDeliveriesOf } from '../activities/sessionEvents';
import { createSubscriptionActivities, type RedemptionGasPricing } from '../activities/subscriptions';
import { createWebhookDeliveryActivities } from '../activities/webhookDelivery';
import {
  createWebhookSecretBox,
  developmentWebhookSecretKey,
  type WebhookSecretBox,
} from '../webhooks/webhookSecrets';
import type { Db } from '../db/client';
import type { Mailer } from '../mail/mailer';
import { chainMonitorWorkflowId } from '../workflows/workflowIds';
import { depositSignallerFor, sessionStarterFor } from '../workflowClient/sessions';
import { webhookDeliveryStarterFor } from '../workflowClient/webhookDeliveries';
import { TASK_QUEUES, type TaskQueueRole } from '../workflows/taskQueues';
import type { Tracing } from '../tracing/tracing';
import { limitYoungGenerationOfNewThreads } from './processMemory';

/**
 * Wiring only: which task queue runs which activities. Every worker registers all workflows of
 * `workflows/index.ts` (bundled once); the activities are built here from their dependencies.
 */

/** What activity factories receive: the process's shared clients. */
export interface WorkerDependencies {
  db: Db;
  /** For activities that start or signal workflows (the session reconciler). */
  temporal: Client;
  /**
   * How webhook deliveries reach receivers (built from WEBHOOK_SECRET_ENCRYPTION_KEY and
   * WEBHOOK_ALLOW_PRIVATE_TARGETS by workers/main.ts). When omitted, as by workers that do not
   * deliver webhooks in tests, private targets are refused and secrets use the development key.
   */
  webhooks?: WebhookWorkerSettings;
  /**
   * Chains and the operator key for the on-chain phase (deposit monitors, forwarders). Without it the
   * worker serves no chain activities: a session that gets paid then fails with the reason.
   */
  settlement?: SettlementWorkerSettings;
  /** Chains whose paymaster receipts are tracked; without it the worker serves no receipt activities. */
  paymasterReceipts?: {
    networks: NetworkRegistry;
    markupBps?: number;
    /** CHAIN_MONITOR_CYCLE_MS: how long one tracker activity keeps scanning (default 30 s; 0 one scan). */
    cycleMs?: number;
  };
  /** Yield deployments: the key that deploys vault sets, and how domains' TXT records are looked up. */
  yield?: YieldWorkerSettings;
  /** Subscription charging (issue 42); without it the worker serves no subscription activities. */
  subscriptions?: SubscriptionWorkerSettings;
}

export interface SubscriptionWorkerSettings {
  networks: NetworkRegistry;
  /** SUBSCRIPTION_EXECUTOR_PRIVATE_KEY's clients; without it every due charge fails with its reason. */
  executor?: OperatorChains;
  /** Prices each redemption's gas for the merchant's prepaid balance (mainnets); without it none is billed. */
  redemptionGas?: RedemptionGasPricing;
}

export interface YieldWorkerSettings {
  /** Without it the worker deploys no vault sets (domains are still verified). */
  deployer?: OperatorChains;
  /** Defaults to the system's resolvers. */
  lookupTxt?: TxtLookup;
}

export interface SettlementWorkerSettings {
  networks: NetworkRegistry;
  operator: OperatorChains;
  slippageBps: number;
  /** How long a LayerZero compose may stay queued before the worker runs it itself (default 60 s). */
  composeRetryAfterMs?: number;
  /** Bridge deliveries beside LayerZero's: the local stack's stand-in (dev/chains/standInDelivery.ts). */
  bridgeDeliveries?: readonly BridgeDeliveryFactory[];
  /** Prefix of this deployment's deposit monitor workflow ids (TEMPORAL_TASK_QUEUE_PREFIX). */
  monitorIdPrefix?: string;
  /**
   * CHAIN_MONITOR_ADDRESSES_PER_REQUEST, CHAIN_MONITOR_LATE_WATCH_SEC (and its per-chain variables),
   * CHAIN_MONITOR_FILTERED_MAX_WATCHED (defaults otherwise); onScanned feeds the worker's /metrics.
   */
  addressesPerRequest?: number;
  lateWatchSec?: number;
  lateWatchSecByChain?: Partial<Record<number, number>>;
  filteredMaxWatched?: number;
  /** CHAIN_MONITOR_CYCLE_MS: how long one monitor activity keeps scanning (default 30 s; 0 one range). */
  cycleMs?: number;
  onScanned?: ChainMonitorDependencies['onScanned'];
}

export interface WebhookWorkerSettings {
  secrets: WebhookSecretBox;
  allowPrivateTargets: boolean;
  /** Tells merchants about endpoints disabled for failing (SMTP_URL); no mail without it. */
  mailer?: Pick<Mailer, 'send'>;
}

const webhookSettingsOf = ({ webhooks }: WorkerDependencies): WebhookWorkerSettings =>
  webhooks ?? { secrets: createWebhookSecretBox(developmentWebhookSecretKey()), allowPrivateTargets: false };

type ActivityFactory = (
  dependencies: WorkerDependencies,
  taskQueues: Record<TaskQueueRole, string>,
) => object;

/** The activities served on each task queue; a role without activities gets no worker yet. */
const ACTIVITIES_BY_ROLE: Partial<Record<TaskQueueRole, ActivityFactory>> = {
  sessions: ({ db, temporal, settlement, subscriptions }, taskQueues) => {
    const deliveryStarter = webhookDeliveryStarterFor(temporal, taskQueues.webhooks);
    const events = createSessionEventActivities({ db, startWebhookDelivery: deliveryStarter });
    return {
      ...createSessionActivities({
        db,
        // Expiry waits for this deployment's deposit monitors (only a worker with settlement runs them).
        chainMonitorIdOf:
          settlement && ((chainId) => chainMonitorWorkflowId(chainId, settlement.monitorIdPrefix ?? '')),
        // An expiry starts its event's deliveries in its own activity.
        startEventDeliveries: (event) => startDeliveriesOf(db, deliveryStarter, event),
      }),
      ...events,
      ...(subscriptions &&
        createSubscriptionActivities({
          db,
          networks: subscriptions.networks,
          executor: subscriptions.executor,
          redemptionGas: subscriptions.redemptionGas,
          startSessionWorkflow: sessionStarterFor(temporal, taskQueues.sessions),
        })),
      ...(settlement &&
        createSettlementActivities({
          db,
          operator: settlement.operator,
          slippageBps: settlement.slippageBps,
          composeRetryAfterMs: settlement.composeRetryAfterMs,
          bridgeDeliveries: settlement.bridgeDeliveries,
        })),
      // Refunds read their transfers from the same chains, and the operator relays forwarder refunds (workflows/refund.ts).
      ...(settlement &&
        createRefundActivities({
          db,
          networks: settlement.networks,
          publicClients: createPublicClients(settlement.networks),
          operator: settlement.operator,
        })),
    };
  },
  chains: ({ db, temporal, settlement, paymasterReceipts }, taskQueues) => ({
    ...(settlement &&
      createChainMonitorActivities({
        db,
        signalDepositDetected: depositSignallerFor(temporal),
        // A transfer mined after its session's expiry gets its session.paid_late event and deliveries.
        startWebhookDelivery: webhookDeliveryStarterFor(temporal, taskQueues.webhooks),
        networks: settlement.networks,
        addressesPerRequest: settlement.addressesPerRequest,
        lateWatchSec: settlement.lateWatchSec,
        lateWatchSecByChain: settlement.lateWatchSecByChain,
        filteredMaxWatched: settlement.filteredMaxWatched,
        cycleMs: settlement.cycleMs,
        onScanned: settlement.onScanned,
      })),
    ...(paymasterReceipts && createPaymasterReceiptActivities({ db, ...paymasterReceipts })),
  }),
  webhooks: (dependencies) =>
    createWebhookDeliveryActivities({ db: dependencies.db, ...webhookSettingsOf(dependencies) }),
  billing: ({ db }) => ({
    ...createBillingStatementActivities({ db }),
    ...createPrepaidBalanceActivities({ db }),
  }),
  yield: ({ db, yield: settings }) => ({
    ...createYieldDomainActivities({ db, lookupTxt: settings?.lookupTxt ?? createTxtLookup() }),
    ...(settings?.deployer && createYieldDeploymentActivities({ db, deployer: settings.deployer })),
  }),
  maintenance: ({ db, temporal }, taskQueues) => ({
    ...createLoginNonceActivities({ db }),
    ...createSessionReconcilerActivities({
      db,
      startSessionWorkflow: sessionStarterFor(temporal, taskQueues.sessions),
    }),
  }),
};

/** The activities a worker on `role`'s queue serves (tests on the time-skipping server reuse this wiring). */
export function activitiesForRole(
  role: TaskQueueRole,
  dependencies: WorkerDependencies,
  taskQueues: Partial<Record<TaskQueueRole, string>> = {},
): object {
  return ACTIVITIES_BY_ROLE[role]?.(dependencies, { ...TASK_QUEUES, ...taskQueues }) ?? {};
}

export interface CreateWorkersOptions {
  connection: NativeConnection;
  namespace: string;
  dependencies: WorkerDependencies;
  /** Task queue names per role, over `TASK_QUEUES`; tests pass unique names so parallel runs do not collide. */
  taskQueues?: Partial<Record<TaskQueueRole, string>>;
  /** A bundle of `workflows/index.ts` made earlier; bundled here otherwise. */
  workflowBundle?: WorkflowBundle;
  /** OpenTelemetry tracing (OTEL_EXPORTER_OTLP_ENDPOINT): workflow and activity spans, bundled interceptors. */
  tracing?: Pick<Tracing, 'workerPlugin' | 'workflowInterceptorModules'>;
}

export interface TemporalWorkers {
  /** Task queue name → its worker. */
  readonly byTaskQueue: ReadonlyMap<string, Worker>;
  /**
   * Polls every task queue until `shutdown()` or a shutdown signal (the worker runtime stops on
   * SIGINT, SIGTERM, SIGQUIT and SIGUSR2 after in-flight tasks finish). When one worker fails, the
   * others are stopped and the failure is thrown.
   */
  run(): Promise<void>;
  /** Asks every running worker to stop and resolves once `run()` has settled. */
  shutdown(): Promise<void>;
}

/** The path the bundler starts from: the workflows barrel, TypeScript sources included. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/** Bundles `workflows/index.ts` for `createWorkers` (webpack, about a second), logging like the workers do. */
export async function bundleWorkflows(workflowInterceptorModules: string[] = []): Promise<WorkflowBundle> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules,
    logger: Runtime.instance().logger,
  });
}

/**
 * Every activity failure leaves the worker without provider URLs in it (viem quotes the RPC URL, which
 * may carry the provider's key): the message becomes the session's failureReason, Temporal's history
 * and the worker's log.
 */
export const redactingProviderUrls: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (error) {
        throw withRedactedProviderUrls(error);
      }
    },
  },
});

/**
 * The settings every worker of this process runs with (the webhook bench's engine-only baseline worker
 * uses them too, so the comparison is the same engine under the same settings).
 */
export const WORKER_TUNING = {
  shutdownGraceTime: '10 seconds',
} as const satisfies Partial<WorkerOptions>;

/**
 * The workflow cache of each task queue's worker, set on purpose (issue 33): without it every worker
 * sizes its cache from the heap (about 600 workflows per GB above 200 MB, per worker), so six workers in
 * one process could keep thousands of sessions cached, each ~0.55 MiB, for the hour a sticky workflow
 * lives. A workflow pushed out of the cache is replayed from its history on its next task (a session's
 * is a few dozen events: milliseconds), so the caches hold what is active, not what is open:
 * - sessions: 60 — sessions being paid and settled; the many awaiting payment for hours are replayed
 *   when their deposit or expiry comes;
 * - webhooks: 30 — deliveries in their first attempts; retries minutes to hours later replay;
 * - chains: 30 — the deposit monitors and receipt trackers (one each per chain), always busy;
 * - yield: 10 — deploys and domain watches (a re-check every 6 h replays);
 * - billing, maintenance: 5 — a few schedules a day.
 * At most 140 workflows cached: the soak measured ~1.1 MiB per cached session workflow, so the caches
 * at 480 kept ~350 MiB after the load whatever was still open, above the soak's bound of 20 % over idle
 * (docs/performance.md). Concurrent workflow tasks may not exceed the cache (the SDK lowers them with a
 * warning), so the queues set both.
 */
export const WORKFLOW_CACHE_BY_ROLE = {
  sessions: { maxCachedWorkflows: 60, maxConcurrentWorkflowTaskExecutions: 40 },
  webhooks: { maxCachedWorkflows: 30, maxConcurrentWorkflowTaskExecutions: 30 },
  chains: { maxCachedWorkflows: 30, maxConcurrentWorkflowTaskExecutions: 20 },
  yield: { maxCachedWorkflows: 10, maxConcurrentWorkflowTaskExecutions: 10 },
  billing: { maxCachedWorkflows: 5, maxConcurrentWorkflowTaskExecutions: 5 },
  maintenance: { maxCachedWorkflows: 5, maxConcurrentWorkflowTaskExecutions: 5 },
} as const satisfies Record<TaskQueueRole, Partial<WorkerOptions>>;

/**
 * One worker per task queue that has activities, all sharing one workflow bundle; their workflow threads
 * start with a small young generation (workers/processMemory.ts).
 */
export async function createWorkers({
  connection,
  namespace,
  dependencies,
  taskQueues = {},
  workflowBundle,
  tracing,
}: CreateWorkersOptions): Promise<TemporalWorkers> {
  if (tracing && workflowBundle)
    throw new Error(
      'createWorkers: a prebuilt workflow bundle lacks the tracing interceptors; omit one of them',
    );
  const bundle = workflowBundle ?? (await bundleWorkflows(tracing?.workflowInterceptorModules));
  const byTaskQueue = new Map<string, Worker>();
  const names = { ...TASK_QUEUES, ...taskQueues };
  // Each Worker.create starts its workflow thread: its isolate gets the small young generation.
  limitYoungGenerationOfNewThreads();
  for (const [role, buildActivities] of Object.entries(ACTIVITIES_BY_ROLE) as [
    TaskQueueRole,
    ActivityFactory,
  ][]) {
    const taskQueue = names[role];
    const worker = await Worker.create({
      connection,
      namespace,
      taskQueue,
      workflowBundle: bundle,
      activities: buildActivities(dependencies, names),
      interceptors: { activity: [redactingProviderUrls] },
      ...WORKER_TUNING,
      ...WORKFLOW_CACHE_BY_ROLE[role],
      ...(tracing && { plugins: [tracing.workerPlugin] }),
    });
    byTaskQueue.set(taskQueue, worker);
  }
  return runnableWorkers(byTaskQueue);
}

function runnableWorkers(byTaskQueue: Map<string, Worker>): TemporalWorkers {
  const workers = [...byTaskQueue.values()];
  let running: Promise<void> | undefined;

  const stopRunning = () => {
    for (const worker of workers) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    }
  };

  const runAll = async () => {
    const results = await Promise.allSettled(
      workers.map((worker) =>
        worker.run().catch((error: unknown) => {
          stopRunning();
          throw error;
        }),
      ),
    );
    const failures = results.flatMap((result) =>
      result.status === 'rejected' ? [result.reason as unknown] : [],
    );
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `${failures.length} Temporal workers failed`);
  };

  return {
    byTaskQueue,
    run: () => (running ??= runAll()),
    shutdown: async () => {
      stopRunning();
      await running?.catch(() => undefined);
    },
  };
}
