import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import {
  createPublicClient,
  defineChain,
  http,
  parseEther,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createNetworkRegistry, type NetworkRegistry } from '../../chain/networkRegistry';
import { createOperatorChains } from '../../chain/operatorChains';
import { startDnsServer, type DnsServer } from '../../dev/services/dnsServer';
import { createWorkers, type TemporalWorkers } from '../../workers/createWorkers';
import { taskQueueNames, type TaskQueueRole } from '../../workflows/taskQueues';
import { createTxtLookup } from '../../yield/txtRecords';
import { startTestApp, type TestApp } from '../harness/app';
import { writeDeploymentsFile } from '../harness/deployments';
import { testStack } from '../harness/stack';
import { startSettlementChains, type SettlementChain } from '../chain/settlementFixture';
import { quietTemporalRuntime } from '../harness/workers';

/**
 * The yield tests' world on the run's shared stack: the API and our workers on task queues of their own,
 * a deployer key of their own (funded on the shared chains, so its nonces race nobody), and a real DNS
 * server on a loopback port whose TXT records the tests set. `breakStakedVault` makes the worker see a
 * non-vault as sUSDe on a chain, so the factory reverts: the failed path, then repaired.
 */
export interface YieldWorld {
  app: TestApp;
  prefix: string;
  taskQueues: Record<TaskQueueRole, string>;
  temporal: Client;
  dns: DnsServer;
  /** name (lower-case) → TXT values the DNS server answers. */
  txtRecords: Map<string, string[]>;
  deployerAddress: Address;
  networks: NetworkRegistry;
  /** Environment of a worker process (workers/main.ts) in this world. */
  workerEnv: Record<string, string>;
  publicClient(chainId: number): PublicClient;
  rpcUrl(chainId: number): string;
  breakStakedVault(chainId: number, broken: boolean): void;
  startWorkers(): Promise<void>;
  stopWorkers(): Promise<void>;
  stop(): Promise<void>;
}

export const YIELD_CHAIN = 11155111;

export async function startYieldWorld({
  privateChain = false,
  prepareChain,
  env: extraEnv = {},
  yieldChain,
  now,
}: {
  /**
   * Run YIELD_CHAIN on an anvil of this world's own (for tests that change the sUSDe rate, which other
   * tests on the shared chains must not see).
   */
  privateChain?: boolean;
  /** On the private chain, before the API starts: deploy more contracts; the answer replaces deployment entries. */
  prepareChain?: (chain: SettlementChain) => Promise<Record<string, Address>>;
  /** More configuration of the API and the worker process (e.g. deploy limits, domain re-check intervals). */
  env?: Record<string, string>;
  /**
   * Run YIELD_CHAIN on a chain the caller started and stops (e.g. the real-protocol local set of
   * dev/services/localChains.ts) instead of the shared one.
   */
  yieldChain?: { rpcUrl: string; contracts: Record<string, Address | undefined> };
  /** The API's clock (e.g. a day of the test's own, so day-windowed counters shared by the run start empty). */
  now?: () => Date;
} = {}): Promise<YieldWorld> {
  quietTemporalRuntime();
  const stack = testStack();
  const prefix = `y${randomBytes(4).toString('hex')}-`;
  const taskQueues = taskQueueNames(prefix);
  const txtRecords = new Map<string, string[]>();
  const dns = await startDnsServer({ records: (name) => txtRecords.get(name) });
  const ownChains = privateChain ? await startSettlementChains([YIELD_CHAIN]) : undefined;
  const rpcUrls: Record<number, string> = Object.fromEntries(
    stack.chains.map((chain) => [chain.chainId, chain.rpcUrl]),
  );
  const chainEnv: Record<string, string> = {};
  if (ownChains) {
    const own = ownChains.chain(YIELD_CHAIN);
    rpcUrls[YIELD_CHAIN] = own.rpcUrl;
    const replaced = prepareChain ? await prepareChain(own) : {};
    chainEnv.DEPLOYMENTS_FILE = writeDeploymentsFile([
      {
        chainId: YIELD_CHAIN,
        rpcUrl: own.rpcUrl,
        contracts: { ...(own.contracts as Record<string, Address>), ...replaced },
      },
    ]);
    chainEnv[`RPC_URL_${YIELD_CHAIN}`] = own.rpcUrl;
  } else if (yieldChain) {
    rpcUrls[YIELD_CHAIN] = yieldChain.rpcUrl;
    const contracts = Object.fromEntries(
      Object.entries(yieldChain.contracts).filter(
        (entry): entry is [string, Address] => entry[1] !== undefined,
      ),
    );
    chainEnv.DEPLOYMENTS_FILE = writeDeploymentsFile([
      { chainId: YIELD_CHAIN, rpcUrl: yieldChain.rpcUrl, contracts },
    ]);
    chainEnv[`RPC_URL_${YIELD_CHAIN}`] = yieldChain.rpcUrl;
  }
  const env = {
    TEMPORAL_TASK_QUEUE_PREFIX: prefix,
    YIELD_DOMAIN_POLL_MS: '200',
    YIELD_DNS_SERVER: dns.address,
    ...chainEnv,
    ...extraEnv,
  };
  const app = await startTestApp(env, { now });

  const deployerKey: Hex = generatePrivateKey();
  const deployerAddress = privateKeyToAccount(deployerKey).address;
  const clients = new Map<number, PublicClient>();
  const publicClient = (chainId: number): PublicClient => {
    const found = clients.get(chainId);
    if (found) return found;
    const rpcUrl = rpcUrls[chainId]!;
    const chain = defineChain({
      id: chainId,
      name: `local ${chainId}`,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    });
    const client = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 100 });
    clients.set(chainId, client);
    return client;
  };
  for (const chainId of Object.keys(rpcUrls).map(Number)) {
    await publicClient(chainId).request({
      method: 'anvil_setBalance' as never,
      params: [deployerAddress, `0x${parseEther('100').toString(16)}`] as never,
    });
  }

  const realNetworks = createNetworkRegistry(app.config);
  const broken = new Set<number>();
  const networks: NetworkRegistry = {
    ...realNetworks,
    byChainId(chainId) {
      const network = realNetworks.byChainId(chainId);
      if (!network || !broken.has(chainId)) return network;
      // USDe itself is no ERC-4626: the vault's constructor (asset()) reverts inside the factory.
      return { ...network, contracts: { ...network.contracts, susde: network.contracts.usde! } };
    },
  };
  const deployer = createOperatorChains({ networks, operatorPrivateKey: deployerKey });

  const clientConnection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection: clientConnection, namespace: stack.temporalNamespace });
  let workers: { handle: TemporalWorkers; running: Promise<void>; connection: NativeConnection } | undefined;
  const startWorkers = async () => {
    const connection = await NativeConnection.connect({ address: stack.temporalAddress });
    const handle = await createWorkers({
      connection,
      namespace: stack.temporalNamespace,
      dependencies: {
        db: app.db,
        temporal,
        yield: { deployer, lookupTxt: createTxtLookup(dns.address) },
      },
      taskQueues,
    });
    workers = { handle, running: handle.run(), connection };
  };
  const stopWorkers = async () => {
    if (!workers) return;
    await workers.handle.shutdown();
    await workers.running;
    await workers.connection.close();
    workers = undefined;
  };
  await startWorkers();

  return {
    app,
    prefix,
    taskQueues,
    temporal,
    dns,
    txtRecords,
    deployerAddress,
    networks,
    workerEnv: {
      ...env,
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: stack.temporalNamespace,
      DEPLOYMENTS_FILE: app.config.DEPLOYMENTS_FILE!,
      ...Object.fromEntries(
        Object.entries(rpcUrls).map(([chainId, rpcUrl]) => [`RPC_URL_${chainId}`, rpcUrl]),
      ),
      YIELD_DEPLOYER_PRIVATE_KEY: deployerKey,
      LOG_LEVEL: 'warn',
    },
    publicClient,
    rpcUrl: (chainId) => rpcUrls[chainId]!,
    breakStakedVault(chainId, isBroken) {
      if (isBroken) broken.add(chainId);
      else broken.delete(chainId);
    },
    startWorkers,
    stopWorkers,
    async stop() {
      await stopWorkers();
      await clientConnection.close();
      await app.close();
      await dns.stop();
      await ownChains?.stop();
    },
  };
}

/** Polls `read` until `done` holds of its value, or fails after `timeoutMs` with the last value. */
export async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
