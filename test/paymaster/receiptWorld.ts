import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { type Hex, numberToHex } from 'viem';
import type { UserOperation } from 'viem/account-abstraction';
import type { EntryPointVersion } from '../../chain/entryPoints';
import { createNetworkRegistry } from '../../chain/networkRegistry';
import { loadConfig } from '../../config';
import { createDb } from '../../db/client';
import { createWorkers, type TemporalWorkers } from '../../workers/createWorkers';
import { startPaymasterReceiptTrackers } from '../../workflowClient/paymasterReceiptTrackers';
import { paymasterReceiptTrackerWorkflowId } from '../../workflows/workflowIds';
import { taskQueueNames } from '../../workflows/taskQueues';
import { type TestApp, startTestApp } from '../harness/app';
import { TEST_STACK_FILE_VARIABLE, testStack } from '../harness/stack';
import { quietTemporalRuntime } from '../harness/workers';
import { type SimpleAccount, rpc } from './smartAccounts';
import {
  type LocalChain,
  type SponsoringMerchant,
  sendAndWait,
  signInSponsoringMerchant,
  sponsorOperation,
} from './sponsoredOperations';

/**
 * The world of a test file about paymaster receipts: the API with a merchant sponsoring calls to the
 * local USDC (sponsoredOperations.ts), and our workers running the `paymaster-receipts-<chainId>`
 * trackers of the chains the file names, on task queues and workflow ids of the file's own prefix;
 * then what the tests read back (usage rows) and the blocks that move the trackers on. Files share the
 * database and the chains: the prefix keeps their workflows and checkpoints apart, the merchant their rows.
 */

export interface ReceiptWorldOptions {
  /** Chains whose trackers this file runs; a chain tracked by two files gets its operations recorded by either. */
  trackedChainIds: number[];
  /** Handed to the receipt activities (they charge included operations at it); omitted, their default. */
  markupBps?: number;
  /** Added to the merchant's paymaster client (e.g. its label). */
  clientFields?: Record<string, unknown>;
  /** The API's clock (its own by default). */
  now?: () => Date;
  /** Configuration of the API on top of the test defaults. */
  appEnv?: Record<string, string>;
}

export interface StartedReceiptWorld extends SponsoringMerchant {
  temporal: Client;
}

/**
 * The file's world, not started yet: its prefix (`prefixLetter` and random hex), config, networks and
 * database handle are there at once; start it in `beforeAll` and stop it in `afterAll`.
 */
export function receiptWorld(prefixLetter: string) {
  const stack = testStack();
  const prefix = `${prefixLetter}${randomBytes(4).toString('hex')}-`;
  const taskQueues = taskQueueNames(prefix);
  const config = loadConfig({
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
  });
  const networks = createNetworkRegistry(config);
  const db = createDb({ connectionString: stack.databaseUrl, maxConnections: 5 });

  let app: TestApp | undefined;
  let sponsor: SponsoringMerchant | undefined;
  let trackedChainIds: number[] = [];
  let temporal: Client | undefined;
  let clientConnection: Connection | undefined;
  let workerConnection: NativeConnection | undefined;
  let workers: TemporalWorkers | undefined;
  let running: Promise<void> | undefined;

  const startedSponsor = (): SponsoringMerchant => {
    if (!sponsor) throw new Error('the receipt world is not started: call start() in beforeAll');
    return sponsor;
  };

  async function start(options: ReceiptWorldOptions): Promise<StartedReceiptWorld> {
    quietTemporalRuntime();
    app = await startTestApp(options.appEnv ?? {}, { now: options.now });
    sponsor = await signInSponsoringMerchant(app, options.clientFields);

    clientConnection = await Connection.connect({ address: stack.temporalAddress });
    temporal = new Client({ connection: clientConnection, namespace: stack.temporalNamespace });
    workerConnection = await NativeConnection.connect({ address: stack.temporalAddress });
    workers = await createWorkers({
      connection: workerConnection,
      namespace: stack.temporalNamespace,
      dependencies: { db, temporal, paymasterReceipts: { networks, markupBps: options.markupBps } },
      taskQueues,
    });
    running = workers.run();
    trackedChainIds = options.trackedChainIds;
    await startPaymasterReceiptTrackers(temporal, {
      chainIds: trackedChainIds,
      taskQueue: taskQueues.chains,
      workflowIdPrefix: prefix,
      pollIntervalMs: 200,
      maxBlockRange: 500,
      droppedGraceSeconds: 60,
    });
    return { ...sponsor, temporal };
  }

  /** Stops whatever `start` got to, so a failed start still cleans up. */
  async function stop(): Promise<void> {
    for (const chainId of trackedChainIds) {
      await temporal?.workflow
        .getHandle(paymasterReceiptTrackerWorkflowId(chainId, prefix))
        .terminate('test finished')
        .catch(() => undefined);
    }
    await workers?.shutdown();
    await running;
    await workerConnection?.close();
    await clientConnection?.close();
    await app?.close();
    await db.destroy();
  }

  /** Blocks past the chain's confirmation depth, so the tracker's safe head reaches what happened so far. */
  async function mineConfirmations(chain: LocalChain): Promise<void> {
    const confirmations = networks.byChainId(chain.chainId)!.confirmations;
    await rpc(chain.rpcUrl, 'anvil_mine', [numberToHex(confirmations + 1)]);
  }

  const usageRow = (userOpHash: string) =>
    db
      .selectFrom('paymaster_usage')
      .selectAll()
      .where('user_op_hash', '=', userOpHash.toLowerCase())
      .executeTakeFirstOrThrow();

  /** The operation's usage row once a tracker moved it on from `submitted`, mining confirmations meanwhile. */
  async function waitForStatusChange(userOpHash: string, chain: LocalChain) {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const row = await usageRow(userOpHash);
      if (row.status !== 'submitted') return row;
      await mineConfirmations(chain);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`usage row of ${userOpHash} stayed submitted for 30 s`);
  }

  return {
    prefix,
    config,
    networks,
    db,
    start,
    stop,
    chainById: (chainId: number): LocalChain => stack.chains.find((chain) => chain.chainId === chainId)!,
    /**
     * The merchant's client sponsors and signs an operation of `callData` (estimated with `estimateWith`
     * when the real call would revert in estimation), its gas estimates with a margin.
     */
    signedOperation: async (
      chain: LocalChain,
      account: SimpleAccount,
      callData: Hex,
      estimateWith: Hex = callData,
    ): Promise<UserOperation<'0.7'>> =>
      (await sponsorOperation(startedSponsor(), chain, account, callData, { estimateWith, gasMargin: true }))
        .operation,
    sendAndWait: (chain: LocalChain, version: EntryPointVersion, operation: UserOperation<'0.7'>) =>
      sendAndWait(startedSponsor(), chain, version, operation),
    mineConfirmations,
    usageRow,
    waitForStatusChange,
  };
}
