import type { Client } from '@temporalio/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createPaymasterReceiptActivities } from '../../activities/paymasterReceipts';
import { writeCheckpoint } from '../../db/deposits';
import { paymasterReceiptTrackerWorkflowId } from '../../workflows/workflowIds';
import type { TestApp } from '../harness/app';
import type { SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { receiptWorld } from './receiptWorld';
import { newAccountOn } from './smartAccounts';
import { usdcCall, userOperationEvent } from './sponsoredOperations';

/**
 * The receipt tracker end to end: real operations signed by our paymaster RPC, sent through Alto and
 * included on the local chains, and the `paymaster-receipts-<chainId>` workflows (our workers, on
 * task queues of this file) moving their usage rows to `onchain_success`, `onchain_reverted` or
 * `dropped` from the UserOperationEvents they read.
 */

const TRACKED_CHAINS = testStack().chains.map((chain) => chain.chainId);
const world = receiptWorld('r');
const { prefix, networks, db, chainById, signedOperation, sendAndWait } = world;
const { mineConfirmations, usageRow, waitForStatusChange } = world;

let app: TestApp;
let merchant: SignedInMerchant;
let temporal: Client;

beforeAll(async () => {
  ({ app, merchant, temporal } = await world.start({ trackedChainIds: TRACKED_CHAINS }));
}, 120_000);

afterAll(() => world.stop());

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

    // The checkpoint lives in chain_monitor_checkpoints under the tracker's own id. The scan writes it
    // after the receipts of its range, so it may trail the status change by a moment.
    const checkpointBlock = async () => {
      const checkpoint = await db
        .selectFrom('chain_monitor_checkpoints')
        .select('last_scanned_block')
        .where('monitor_id', '=', paymasterReceiptTrackerWorkflowId(chain.chainId, prefix))
        .executeTakeFirst();
      return checkpoint ? BigInt(checkpoint.last_scanned_block) : -1n;
    };
    const deadline = Date.now() + 10_000;
    while ((await checkpointBlock()) < inclusion.blockNumber && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await checkpointBlock()).toBeGreaterThanOrEqual(inclusion.blockNumber);

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
    // Its sponsorship holds (which stopped counting at validUntil) are gone with it.
    expect(row!.hold_id).not.toBeNull();
    expect(
      await db
        .selectFrom('paymaster_operation_holds')
        .select('counter_keys')
        .where('hold_id', '=', row!.hold_id!)
        .execute(),
    ).toEqual([]);
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
