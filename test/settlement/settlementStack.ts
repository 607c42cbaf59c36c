import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import {
  createTestClient,
  defineChain,
  erc20Abi,
  http,
  publicActions,
  walletActions,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainMonitorDependencies } from '../../activities/chainMonitor';
import { createLogger } from '../../logging/logger';
import { loadConfig } from '../../config';
import { LOCAL_RELAYER, LOCAL_SETTLEMENT_OPERATOR } from '../../dev/chains/localSettlement';
import { createNetworkRegistry, type NetworkRegistry } from '../../chain/networkRegistry';
import { createOperatorChains, type OperatorChains } from '../../chain/operatorChains';
import { createDb, type Db } from '../../db/client';
import type { SettlementProtocols } from '../../dev/chains/deployLocalChain';
import { layerZeroRelayChainsOf, startLayerZeroRelayer } from '../../dev/protocols/layerZeroRelayer';
import { relayerChainsOf, startRelayer } from '../../dev/relayer';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { LOCAL_TESTNET_CHAIN_IDS, type LocalChainId } from '../../dev/localChains';
import { startLocalChains } from '../../dev/services/localChains';
import { startChainMonitors } from '../../workflowClient/chainMonitors';
import { createWorkers, type TemporalWorkers, type WebhookWorkerSettings } from '../../workers/createWorkers';
import { taskQueueNames, type TaskQueueRole } from '../../workflows/taskQueues';
import { createStandInDelivery } from '../../dev/chains/standInDelivery';
import { startTestApp, type TestApp } from '../harness/app';
import { writeDeploymentsFile } from '../harness/deployments';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { quietTemporalRuntime } from '../harness/workers';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';

/**
 * A settlement world of its own: anvil chains private to the test file (the testnets unless asked) (so snapshots, reorgs
 * and rate changes touch nobody else), our contracts on them, the worker with the operator key and
 * the deposit monitors, the relayer between the chains, and the API — all on the run's shared
 * Postgres and Temporal, isolated by task-queue prefix.
 */
export interface SettlementStack {
  app: TestApp;
  merchant: SignedInMerchant;
  sk: { authorization: string };
  db: Db;
  temporal: Client;
  prefix: string;
  taskQueues: Record<TaskQueueRole, string>;
  networks: NetworkRegistry;
  /** The worker's operator key on these chains (for calling settlement activities directly). */
  operator: OperatorChains;
  deploymentsFile: string;
  rpcUrls: Record<number, string>;
  chain(chainId: number): ReturnType<typeof testChainClient>;
  contracts(chainId: number): Record<string, Address>;
  /** Environment for a separate worker process speaking to this stack. */
  workerEnv: Record<string, string>;
  /** Another API instance on this world (e.g. with a shifted clock); the stack closes it. */
  startApp(options?: { env?: Record<string, string>; now?: () => Date }): Promise<TestApp>;
  startWorkers(): Promise<TemporalWorkers>;
  stopWorkers(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The statuses a session's workflow entered, in order, read from the `SessionStatus` search attribute
 * upserts in its history once the workflow has finished: a poll of the status route can miss a state
 * that lasts less than one poll on a loaded machine; the history cannot.
 */
export async function statusesRecorded(temporal: Client, sessionId: string): Promise<string[]> {
  const handle = temporal.workflow.getHandle(`session-${sessionId}`);
  await handle.result();
  const history = await handle.fetchHistory();
  return history.events!.flatMap((event) => {
    const fields = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    const payload = fields?.SessionStatus?.data;
    return payload ? [JSON.parse(Buffer.from(payload).toString()) as string] : [];
  });
}

export function testChainClient(
  rpcUrl: string,
  chainId: number,
  privateKey: Hex = ANVIL_DEV_ACCOUNTS[2].privateKey,
) {
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return createTestClient({
    mode: 'anvil',
    chain,
    transport: http(rpcUrl),
    account: privateKeyToAccount(privateKey),
  })
    .extend(publicActions)
    .extend(walletActions);
}

export async function startSettlementStack({
  chainIds = LOCAL_TESTNET_CHAIN_IDS,
  env: extraEnv = {},
  protocols = 'stand-ins',
  composeRetryAfterMs = 1_000,
  webhooks,
  databaseUrl,
  rpcUrlOf = async (rpcUrl) => rpcUrl,
  monitor,
  subscriptionExecutorKey,
}: {
  chainIds?: readonly LocalChainId[];
  /** A database of the test file's own (migrated), instead of the run's shared one. */
  databaseUrl?: string;
  /** The RPC URL the api and worker use for a chain's anvil (e.g. a proxy in front of it). */
  rpcUrlOf?: (rpcUrl: string, chainId: number) => Promise<string>;
  /** The deposit monitors' settings beside the defaults (the late window per chain, the switch point). */
  monitor?: Pick<ChainMonitorDependencies, 'filteredMaxWatched' | 'lateWatchSecByChain' | 'onScanned'>;
  /** Extra API and worker configuration (e.g. treasury addresses). */
  env?: Record<string, string>;
  /** The local stand-ins (fast) or the real protocols (Uniswap v3, LayerZero OFT, Ethena-like sUSDe). */
  protocols?: SettlementProtocols;
  /** How long the worker lets a LayerZero compose sit queued before running it itself. */
  composeRetryAfterMs?: number;
  /** Webhook delivery settings of the worker (e.g. a loopback receiver: allowPrivateTargets). */
  webhooks?: WebhookWorkerSettings;
  /** The subscription executor's key: the workers then charge subscriptions (issue 42). */
  subscriptionExecutorKey?: Hex;
} = {}): Promise<SettlementStack> {
  quietTemporalRuntime();
  const anvil = await startLocalChains({ chainIds, protocols });
  const { chains } = anvil;
  const deploymentsFile = writeDeploymentsFile(chains);
  const rpcUrls = Object.fromEntries(chains.map((chain) => [chain.chainId, chain.rpcUrl]));
  const prefix = `s${randomBytes(4).toString('hex')}-`;
  const taskQueues = taskQueueNames(prefix);
  const stack = testStack();
  const env = {
    DEPLOYMENTS_FILE: deploymentsFile,
    TEMPORAL_TASK_QUEUE_PREFIX: prefix,
    ...Object.fromEntries(
      await Promise.all(
        chains.map(async (chain) => [
          `RPC_URL_${chain.chainId}`,
          await rpcUrlOf(chain.rpcUrl, chain.chainId),
        ]),
      ),
    ),
    ...(databaseUrl && { DATABASE_URL: databaseUrl }),
    ...extraEnv,
  };
  const config = loadConfig({
    DATABASE_URL: stack.databaseUrl,
    ...env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
  });
  const networks = createNetworkRegistry(config);
  const db = createDb({ connectionString: databaseUrl ?? stack.databaseUrl, maxConnections: 5 });
  const clientConnection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection: clientConnection, namespace: stack.temporalNamespace });
  const operator = createOperatorChains({
    networks,
    operatorPrivateKey: LOCAL_SETTLEMENT_OPERATOR.privateKey,
  });

  let workers: { handle: TemporalWorkers; running: Promise<void>; connection: NativeConnection } | undefined;
  const startWorkers = async () => {
    const connection = await NativeConnection.connect({ address: stack.temporalAddress });
    const handle = await createWorkers({
      connection,
      namespace: stack.temporalNamespace,
      dependencies: {
        db,
        temporal,
        // Receivers in tests listen on loopback (the lifecycle events' end-to-end test) unless the test sets its own.
        webhooks: webhooks ?? {
          secrets: createWebhookSecretBox(developmentWebhookSecretKey()),
          allowPrivateTargets: true,
        },
        settlement: {
          networks,
          operator,
          slippageBps: 50,
          monitorIdPrefix: prefix,
          ...monitor,
          composeRetryAfterMs,
          bridgeDeliveries: [createStandInDelivery],
        },
        ...(subscriptionExecutorKey && {
          subscriptions: {
            networks,
            executor: createOperatorChains({ networks, operatorPrivateKey: subscriptionExecutorKey }),
          },
        }),
      },
      taskQueues,
    });
    workers = { handle, running: handle.run(), connection };
    return handle;
  };
  const stopWorkers = async () => {
    if (!workers) return;
    await workers.handle.shutdown();
    await workers.running;
    await workers.connection.close();
    workers = undefined;
  };
  await startWorkers();
  await startChainMonitors(temporal, {
    chainIds: chains.map((chain) => chain.chainId),
    taskQueue: taskQueues.chains,
    workflowIdPrefix: prefix,
    pollIntervalMs: 200,
    maxBlockRange: 500,
  });
  const relayerLogger = createLogger({ level: 'warn', name: 'relayer' });
  const relayer =
    protocols === 'real'
      ? await startLayerZeroRelayer({
          chains: layerZeroRelayChainsOf({ chains }),
          relayerPrivateKey: LOCAL_RELAYER.privateKey,
          pollIntervalMs: 200,
          logger: relayerLogger,
        })
      : await startRelayer({
          chains: relayerChainsOf({ chains }),
          relayerPrivateKey: LOCAL_RELAYER.privateKey,
          pollIntervalMs: 200,
          logger: relayerLogger,
        });
  const app = await startTestApp(env);
  const extraApps: TestApp[] = [];
  const merchant = await signInNewMerchant(app);
  const sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };

  return {
    app,
    merchant,
    sk,
    db,
    temporal,
    prefix,
    taskQueues,
    networks,
    operator,
    deploymentsFile,
    rpcUrls,
    chain: (chainId) => testChainClient(rpcUrls[chainId]!, chainId),
    contracts: (chainId) =>
      chains.find((chain) => chain.chainId === chainId)!.contracts as Record<string, Address>,
    workerEnv: {
      DATABASE_URL: stack.databaseUrl,
      ...env,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: stack.temporalNamespace,
      OPERATOR_PRIVATE_KEY: LOCAL_SETTLEMENT_OPERATOR.privateKey,
      CHAIN_MONITOR_POLL_MS: '200',
      LOG_LEVEL: 'warn',
    },
    async startApp({ env: appEnv = {}, now } = {}) {
      const extra = await startTestApp({ ...env, ...appEnv }, { now });
      extraApps.push(extra);
      return extra;
    },
    startWorkers,
    stopWorkers,
    async stop() {
      await app.close();
      for (const extra of extraApps) await extra.close();
      await relayer.stop();
      for (const chain of chains) {
        await temporal.workflow
          .getHandle(`${prefix}chain-monitor-${chain.chainId}`)
          .terminate('test finished')
          .catch(() => undefined);
      }
      await stopWorkers();
      await clientConnection.close();
      await db.destroy();
      await anvil.stop();
    },
  };
}

/** Mints `amount` base units of the local test `token` to the client's own account (the payer); its receipt. */
export async function mintToPayer(
  client: ReturnType<typeof testChainClient>,
  token: Address,
  amount: bigint,
) {
  const mint = await client.writeContract({
    address: token,
    abi: [
      {
        type: 'function',
        name: 'mint',
        stateMutability: 'nonpayable',
        inputs: [
          { name: 'to', type: 'address' },
          { name: 'amount', type: 'uint256' },
        ],
        outputs: [],
      },
    ] as const,
    functionName: 'mint',
    args: [client.account.address, amount],
  });
  return client.waitForTransactionReceipt({ hash: mint });
}

/** Pays `amount` base units of `token` to `to` from a funded test account (mint then transfer, like a wallet would). */
export async function payDeposit(
  client: ReturnType<typeof testChainClient>,
  { token, to, amount }: { token: Address; to: Address; amount: bigint },
): Promise<Hex> {
  await mintToPayer(client, token, amount);
  const hash = await client.writeContract({
    address: token,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [to, amount],
  });
  await client.waitForTransactionReceipt({ hash });
  return hash;
}

/** A session as `GET /v1/sessions/:id` answers it: what a payer needs of its options. */
export interface StackSession {
  id: string;
  paymentOptions: Array<{
    chainId: number;
    symbol: string;
    tokenAddress: Address;
    depositAddress: Address;
    amount: string;
    decimals: number;
  }>;
}

/** Creates a sandbox session through the API with the stack merchant's secret key, then reads it back. */
export async function createStackSession(stack: SettlementStack, json: object): Promise<StackSession> {
  const created = await stack.app.request('/v1/sessions', {
    method: 'POST',
    headers: stack.sk,
    json: { sandboxMode: true, ...json },
  });
  if (created.status !== 201) throw new Error(`POST /v1/sessions answered ${created.status}`);
  return (await stack.app.request(`/v1/sessions/${created.body.id}`)).body as StackSession;
}
