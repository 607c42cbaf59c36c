import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { type Address, type Hex, encodeFunctionData, hexToBigInt, numberToHex, parseEventLogs } from 'viem';
import type { UserOperation } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createPaymasterReceiptActivities } from '../../activities/paymasterReceipts';
import { type EntryPointVersion, entryPointAbi } from '../../chain/entryPoints';
import { createNetworkRegistry } from '../../chain/networkRegistry';
import { loadConfig } from '../../config';
import { createDb } from '../../db/client';
import { writeCheckpoint } from '../../db/deposits';
import { TestStablecoin } from '../../contracts/artifacts';
import { createWorkers, type TemporalWorkers } from '../../workers/createWorkers';
import {
  paymasterReceiptTrackerWorkflowId,
  startPaymasterReceiptTrackers,
} from '../../workers/paymasterReceiptTrackers';
import { taskQueueNames } from '../../workers/taskQueues';
import { type TestApp, startTestApp } from '../harness/app';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';
import { TEST_STACK_FILE_VARIABLE, testStack } from '../harness/stack';
import { quietTemporalRuntime } from '../harness/workers';
import { allowContract, createPaymasterClient, paymasterRpc } from './paymasterApi';
import {
  ENTRY_POINTS,
  type SimpleAccount,
  deploySimpleAccountFactory,
  fundedWallet,
  newSimpleAccount,
  publicClientFor,
  rpc,
  toRpcUserOperation,
} from './smartAccounts';

/**
 * The receipt tracker end to end: real operations signed by our paymaster RPC, sent through Alto and
 * included on the local chains, and the `paymaster-receipts-<chainId>` workflows (our workers, on
 * task queues of this file) moving their usage rows to `onchain_success`, `onchain_reverted` or
 * `dropped` from the UserOperationEvents they read.
 */

const stack = testStack();
const prefix = `r${randomBytes(4).toString('hex')}-`;
const taskQueues = taskQueueNames(prefix);
const config = loadConfig({
  DATABASE_URL: stack.databaseUrl,
  TEMPORAL_ADDRESS: stack.temporalAddress,
  DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
});
const networks = createNetworkRegistry(config);
const db = createDb({ connectionString: stack.databaseUrl, maxConnections: 5 });
const TRACKED_CHAINS = stack.chains.map((chain) => chain.chainId);

let app: TestApp;
let merchant: SignedInMerchant;
let clientId: string;
let temporal: Client;
let clientConnection: Connection;
let workerConnection: NativeConnection;
let workers: TemporalWorkers;
let running: Promise<void>;

beforeAll(async () => {
  quietTemporalRuntime();
  app = await startTestApp();
  merchant = await signInNewMerchant(app);
  const client = await createPaymasterClient(app, merchant, {
    allowedChainIds: TRACKED_CHAINS,
    gasMode: 'both',
  });
  clientId = client.clientId;
  for (const chain of stack.chains) await allowContract(app, merchant, chain.chainId, chain.contracts.usdc!);

  clientConnection = await Connection.connect({ address: stack.temporalAddress });
  temporal = new Client({ connection: clientConnection, namespace: stack.temporalNamespace });
  workerConnection = await NativeConnection.connect({ address: stack.temporalAddress });
  workers = await createWorkers({
    connection: workerConnection,
    namespace: stack.temporalNamespace,
    dependencies: { db, temporal, paymasterReceipts: { networks } },
    taskQueues,
  });
  running = workers.run();
  await startPaymasterReceiptTrackers(temporal, {
    chainIds: TRACKED_CHAINS,
    taskQueue: taskQueues.chains,
    workflowIdPrefix: prefix,
    pollIntervalMs: 200,
    maxBlockRange: 500,
    droppedGraceSeconds: 60,
  });
}, 120_000);

afterAll(async () => {
  for (const chainId of TRACKED_CHAINS) {
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
});

type Chain = (typeof stack.chains)[number];
const chainById = (chainId: number): Chain => stack.chains.find((chain) => chain.chainId === chainId)!;

async function viaBundlerProxy<T>(chainId: number, method: string, params: unknown[]): Promise<T> {
  const response = await app.request(`/v1/paymaster/bundler/${chainId}`, {
    method: 'POST',
    headers: { 'x-client-id': clientId },
    json: { jsonrpc: '2.0', id: 1, method, params },
  });
  if (response.status !== 200 || response.body.error) {
    throw new Error(`${method} through the bundler proxy answered ${response.status}: ${response.text}`);
  }
  return response.body.result as T;
}

async function viaPaymasterRpc(method: string, params: unknown[]): Promise<Record<string, Hex>> {
  const response = await paymasterRpc(app, clientId, { jsonrpc: '2.0', id: 1, method, params });
  if (response.status !== 200 || response.body.error)
    throw new Error(`${method} answered ${response.status}: ${response.text}`);
  return response.body.result;
}

async function newAccountOn(chain: Chain, version: EntryPointVersion): Promise<SimpleAccount> {
  const wallet = await fundedWallet(chain.rpcUrl, chain.chainId);
  const factory = await deploySimpleAccountFactory(wallet, version);
  return newSimpleAccount(publicClientFor(chain.rpcUrl), { version, factory });
}

const usdcCall = (functionName: 'mint' | 'transfer', to: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: TestStablecoin.abi, functionName, args: [to, amount] });

/** 20 % over an estimate: the signed operation's calldata may differ from the estimated one. */
const withMargin = (value: Hex) => (hexToBigInt(value) * 12n) / 10n;

/**
 * The wallet flow up to a signed operation: stub data, estimation through the proxy (of `estimateWith`
 * when the real call would revert in estimation), paymaster data from our RPC, the owner's signature.
 */
async function signedOperation(
  chain: Chain,
  account: SimpleAccount,
  callData: Hex,
  estimateWith: Hex = callData,
): Promise<UserOperation<'0.7'>> {
  const entryPoint = ENTRY_POINTS[account.version];
  const prices = await viaBundlerProxy<{ fast: { maxFeePerGas: Hex; maxPriorityFeePerGas: Hex } }>(
    chain.chainId,
    'pimlico_getUserOperationGasPrice',
    [],
  );
  const draft: Partial<UserOperation<'0.7'>> = {
    sender: account.address,
    nonce: 0n,
    factory: account.factory,
    factoryData: account.factoryData,
    callData: estimateWith,
    maxFeePerGas: hexToBigInt(prices.fast.maxFeePerGas),
    maxPriorityFeePerGas: hexToBigInt(prices.fast.maxPriorityFeePerGas),
  };
  const rpcParams = (op: Partial<UserOperation<'0.7'>>) => [
    toRpcUserOperation(op),
    entryPoint,
    numberToHex(chain.chainId),
  ];
  const stub = await viaPaymasterRpc('pm_getPaymasterStubData', rpcParams(draft));
  const estimate = await viaBundlerProxy<Record<string, Hex>>(chain.chainId, 'eth_estimateUserOperationGas', [
    toRpcUserOperation({
      ...draft,
      callGasLimit: 0n,
      verificationGasLimit: 0n,
      preVerificationGas: 0n,
      paymaster: stub.paymaster as Address,
      paymasterData: stub.paymasterData,
      paymasterVerificationGasLimit: hexToBigInt(stub.paymasterVerificationGasLimit!),
      paymasterPostOpGasLimit: hexToBigInt(stub.paymasterPostOpGasLimit!),
      signature: await privateKeyToAccount(generatePrivateKey()).signMessage({ message: 'estimation only' }),
    }),
    entryPoint,
  ]);
  const estimated: Partial<UserOperation<'0.7'>> = {
    ...draft,
    callData,
    callGasLimit: withMargin(estimate.callGasLimit!),
    verificationGasLimit: hexToBigInt(estimate.verificationGasLimit!),
    preVerificationGas: withMargin(estimate.preVerificationGas!),
    paymasterVerificationGasLimit: hexToBigInt(estimate.paymasterVerificationGasLimit!),
    paymasterPostOpGasLimit: hexToBigInt(estimate.paymasterPostOpGasLimit ?? '0x0'),
  };
  const signed = await viaPaymasterRpc('pm_getPaymasterData', rpcParams(estimated));
  const operation = {
    ...estimated,
    paymaster: signed.paymaster as Address,
    paymasterData: signed.paymasterData!,
    paymasterVerificationGasLimit: hexToBigInt(signed.paymasterVerificationGasLimit!),
    paymasterPostOpGasLimit: hexToBigInt(signed.paymasterPostOpGasLimit!),
    signature: '0x',
  } as UserOperation<'0.7'>;
  operation.signature = await account.sign(operation, chain.chainId);
  return operation;
}

interface Inclusion {
  userOpHash: Hex;
  success: boolean;
  transactionHash: Hex;
  blockNumber: bigint;
}

async function sendAndWait(
  chain: Chain,
  version: EntryPointVersion,
  operation: UserOperation<'0.7'>,
): Promise<Inclusion> {
  const userOpHash = await viaBundlerProxy<Hex>(chain.chainId, 'eth_sendUserOperation', [
    toRpcUserOperation(operation),
    ENTRY_POINTS[version],
  ]);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const receipt = await viaBundlerProxy<{
      success: boolean;
      receipt: { blockNumber: Hex; transactionHash: Hex };
    } | null>(chain.chainId, 'eth_getUserOperationReceipt', [userOpHash]);
    if (receipt) {
      return {
        userOpHash,
        success: receipt.success,
        transactionHash: receipt.receipt.transactionHash,
        blockNumber: hexToBigInt(receipt.receipt.blockNumber),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`user operation ${userOpHash} was not included within 30 s`);
}

/** The operation's UserOperationEvent, read straight from the EntryPoint. */
async function userOperationEvent(chain: Chain, version: EntryPointVersion, inclusion: Inclusion) {
  const logs = await publicClientFor(chain.rpcUrl).getLogs({
    address: ENTRY_POINTS[version],
    fromBlock: inclusion.blockNumber,
    toBlock: inclusion.blockNumber,
  });
  return parseEventLogs({ abi: entryPointAbi, logs, eventName: 'UserOperationEvent' }).find(
    (event) => event.args.userOpHash === inclusion.userOpHash,
  )!;
}

/** Blocks past the chain's confirmation depth, so the tracker's safe head reaches what happened so far. */
async function mineConfirmations(chain: Chain): Promise<void> {
  const confirmations = networks.byChainId(chain.chainId)!.confirmations;
  await rpc(chain.rpcUrl, 'anvil_mine', [numberToHex(confirmations + 1)]);
}

const usageRow = (userOpHash: string) =>
  db
    .selectFrom('paymaster_usage')
    .selectAll()
    .where('user_op_hash', '=', userOpHash.toLowerCase())
    .executeTakeFirstOrThrow();

async function waitForStatusChange(userOpHash: string, chain: Chain) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const row = await usageRow(userOpHash);
    if (row.status !== 'submitted') return row;
    await mineConfirmations(chain);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`usage row of ${userOpHash} stayed submitted for 30 s`);
}

describe('paymaster receipt tracking', () => {
  it('moves an included sponsored operation (EntryPoint v0.7) to onchain_success with its event figures, idempotently', async () => {
    const chain = chainById(84532);
    const account = await newAccountOn(chain, '0.7');
    const operation = await signedOperation(
      chain,
      account,
      account.execute(chain.contracts.usdc!, 0n, usdcCall('mint', account.address, 5n)),
    );
    const inclusion = await sendAndWait(chain, '0.7', operation);
    expect(inclusion.success).toBe(true);
    const event = await userOperationEvent(chain, '0.7', inclusion);
    expect(event.args.paymaster).toBe(chain.contracts.paymasterV07);

    const row = await waitForStatusChange(inclusion.userOpHash, chain);
    expect(row).toMatchObject({
      status: 'onchain_success',
      mode: 'sponsored',
      chain_id: chain.chainId,
      actual_gas_cost: event.args.actualGasCost.toString(),
      actual_gas_used: event.args.actualGasUsed.toString(),
      tx_hash: inclusion.transactionHash.toLowerCase(),
      block_number: inclusion.blockNumber.toString(),
    });

    // The checkpoint lives in chain_monitor_checkpoints under the tracker's own id.
    const checkpoint = await db
      .selectFrom('chain_monitor_checkpoints')
      .selectAll()
      .where('monitor_id', '=', paymasterReceiptTrackerWorkflowId(chain.chainId, prefix))
      .executeTakeFirstOrThrow();
    expect(BigInt(checkpoint.last_scanned_block)).toBeGreaterThanOrEqual(inclusion.blockNumber);

    // A rescan of the same blocks changes nothing...
    const activities = createPaymasterReceiptActivities({ db, networks });
    const monitorId = `${prefix}rescan-${chain.chainId}`;
    await writeCheckpoint(db, { monitorId, chainId: chain.chainId, block: inclusion.blockNumber - 1n });
    const rescan = await activities.scanPaymasterReceipts({
      chainId: chain.chainId,
      monitorId,
      maxBlockRange: 1,
      droppedGraceSeconds: 60,
    });
    expect(rescan).toMatchObject({ toBlock: inclusion.blockNumber.toString(), recorded: 0 });
    expect(rescan.events).toBeGreaterThanOrEqual(1);
    expect(await usageRow(inclusion.userOpHash)).toEqual(row);

    // ...and corrects a row the sweep had dropped too early: the chain is the truth.
    await db.updateTable('paymaster_usage').set({ status: 'dropped' }).where('id', '=', row.id).execute();
    await writeCheckpoint(db, { monitorId, chainId: chain.chainId, block: inclusion.blockNumber - 1n });
    const correction = await activities.scanPaymasterReceipts({
      chainId: chain.chainId,
      monitorId,
      maxBlockRange: 1,
      droppedGraceSeconds: 60,
    });
    expect(correction.recorded).toBe(1);
    expect(await usageRow(inclusion.userOpHash)).toEqual(row);

    // The dashboard feed shows the receipt.
    const feed = await app.request('/v1/merchants/me/paymaster/overview/recent-ops?limit=100', {
      headers: merchant.auth,
    });
    expect(
      feed.body.find((item: { userOpHash: string }) => item.userOpHash === inclusion.userOpHash),
    ).toMatchObject({
      status: 'onchain_success',
      actualGasCost: event.args.actualGasCost.toString(),
      txHash: inclusion.transactionHash.toLowerCase(),
    });
  });

  it('moves an included operation whose call reverts (EntryPoint v0.8) to onchain_reverted, gas still recorded', async () => {
    const chain = chainById(421614);
    const account = await newAccountOn(chain, '0.8');
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    // The account holds no USDC: the transfer reverts inside the operation, after the paymaster validated it.
    const operation = await signedOperation(
      chain,
      account,
      account.execute(chain.contracts.usdc!, 0n, usdcCall('transfer', stranger, 1_000n)),
      account.execute(chain.contracts.usdc!, 0n, usdcCall('mint', stranger, 1_000n)),
    );
    const inclusion = await sendAndWait(chain, '0.8', operation);
    expect(inclusion.success).toBe(false);
    const event = await userOperationEvent(chain, '0.8', inclusion);
    expect(event.args).toMatchObject({ success: false, paymaster: chain.contracts.paymasterV08 });

    const row = await waitForStatusChange(inclusion.userOpHash, chain);
    expect(row).toMatchObject({
      status: 'onchain_reverted',
      actual_gas_cost: event.args.actualGasCost.toString(),
      actual_gas_used: event.args.actualGasUsed.toString(),
      tx_hash: inclusion.transactionHash.toLowerCase(),
      block_number: inclusion.blockNumber.toString(),
    });
    expect(BigInt(row.actual_gas_cost!)).toBeGreaterThan(0n);
  });

  it('drops a signed operation that was never sent once its validUntil has passed by more than the grace', async () => {
    const chain = chainById(11155111);
    const account = await newAccountOn(chain, '0.8');
    const operation = await signedOperation(
      chain,
      account,
      account.execute(chain.contracts.usdc!, 0n, usdcCall('mint', account.address, 1n)),
    );
    const [row] = await db
      .selectFrom('paymaster_usage')
      .selectAll()
      .where('merchant_id', '=', merchant.merchantId)
      .where('sender', '=', operation.sender.toLowerCase())
      .execute();
    expect(row).toMatchObject({ status: 'submitted', chain_id: chain.chainId });
    // The RPC stored the validity it signed: ten minutes from now.
    expect(Math.abs(row!.valid_until!.getTime() - (Date.now() + 600_000))).toBeLessThan(60_000);

    // Still valid: a scan leaves it alone.
    await mineConfirmations(chain);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await usageRow(row!.user_op_hash!)).status).toBe('submitted');

    // Its validity ended an hour ago (past the 60 s grace) and nothing was included: dropped.
    await db
      .updateTable('paymaster_usage')
      .set({ valid_until: new Date(Date.now() - 3_600_000) })
      .where('id', '=', row!.id)
      .execute();
    const dropped = await waitForStatusChange(row!.user_op_hash!, chain);
    expect(dropped).toMatchObject({
      status: 'dropped',
      actual_gas_cost: null,
      tx_hash: null,
      block_number: null,
    });
  });

  it('runs one tracker workflow per chain on the chains task queue', async () => {
    for (const chainId of TRACKED_CHAINS) {
      const description = await temporal.workflow
        .getHandle(paymasterReceiptTrackerWorkflowId(chainId, prefix))
        .describe();
      expect(description).toMatchObject({
        status: { name: 'RUNNING' },
        type: 'paymasterReceiptTrackerWorkflow',
      });
    }
  });
});
