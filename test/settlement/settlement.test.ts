import { sql } from 'kysely';
import { erc20Abi, getAddress, parseEventLogs, type Address, type Hex } from 'viem';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { signInNewMerchant } from '../harness/merchants';
import { sessionIdToBytes16 } from '../../chain/depositAddress';
import { Forwarder, LocalStakedUSDe, LocalSwapRouter, StakingComposer } from '../../contracts/artifacts';
import {
  createStackSession,
  payDeposit,
  startSettlementStack,
  statusesRecorded,
  testChainClient,
  type SettlementStack,
} from './settlementStack';
import { startWorkerProcess, waitForOutput } from './workerProcess';
import { SESSION_RECONCILER_SCHEDULE_ID } from '../../workflows/workflowIds';
import { taskQueueNames } from '../../workflows/taskQueues';

/**
 * The settlement pipeline end to end on local anvil chains, the real worker and deposit monitors on
 * Temporal, and Postgres: deposit → confirming → forwarder → swap → stake (or bridge) → completed.
 */
const ETHEREUM_SEPOLIA = 11155111;
const BASE_SEPOLIA = 84532;
const ARBITRUM_SEPOLIA = 421614;
const CONFIRMATIONS = 3;

describe('settlement pipeline', () => {
  let stack: SettlementStack;
  beforeAll(async () => {
    stack = await startSettlementStack();
  }, 120_000);
  afterAll(() => stack?.stop());

  const createSession = (json: object = {}) => createStackSession(stack, { amount: '100', ...json });

  const optionOf = (session: Awaited<ReturnType<typeof createSession>>, chainId: number, symbol: string) =>
    session.paymentOptions.find((option) => option.chainId === chainId && option.symbol === symbol)!;

  /** Pays the option's exact amount to its deposit address. */
  const payInFull = (chainId: number, option: ReturnType<typeof optionOf>) =>
    payDeposit(stack.chain(chainId), {
      token: option.tokenAddress,
      to: option.depositAddress,
      amount: BigInt(option.amount),
    });

  async function confirm(chainId: number) {
    await stack.chain(chainId).mine({ blocks: CONFIRMATIONS + 1 });
  }

  async function waitForStatus(sessionId: string, wanted: string[], timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      last = (await stack.app.request(`/v1/sessions/${sessionId}/status`)).body.status;
      if (wanted.includes(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`session ${sessionId} is ${last}, not ${wanted.join('/')} after ${timeoutMs} ms`);
  }

  const susdeBalance = (chainId: number, owner: Address, blockNumber?: bigint) =>
    stack.chain(chainId).readContract({
      address: stack.contracts(chainId).susde!,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [owner],
      blockNumber,
    });

  /** The flush of a session on a chain: its receipt's Flushed event, and the block before it. */
  async function flushOf(sessionId: string, chainId: number) {
    const rows = await stack.db
      .selectFrom('settlements')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('chain_id', '=', chainId)
      .execute();
    expect(rows).toHaveLength(1);
    const receipt = await stack.chain(chainId).getTransactionReceipt({ hash: rows[0]!.flush_tx_hash as Hex });
    const [flushed] = parseEventLogs({ abi: Forwarder.abi, eventName: 'Flushed', logs: receipt.logs });
    return { row: rows[0]!, receipt, flushed: flushed!.args, before: receipt.blockNumber - 1n };
  }

  it('USDC on the Ethereum Sepolia stand-in: confirming, then completed; the merchant holds exactly the sUSDe the rate and share price give', async () => {
    const session = await createSession({ amount: '100.25' });
    const option = optionOf(session, ETHEREUM_SEPOLIA, 'USDC');
    const merchant = getAddress(stack.merchant.account.address);
    const balanceBefore = await susdeBalance(ETHEREUM_SEPOLIA, merchant);

    await payInFull(ETHEREUM_SEPOLIA, option);
    await confirm(ETHEREUM_SEPOLIA);
    await waitForStatus(session.id, ['completed']);

    const { flushed, before, row } = await flushOf(session.id, ETHEREUM_SEPOLIA);
    const contracts = stack.contracts(ETHEREUM_SEPOLIA);
    const rate = await stack.chain(ETHEREUM_SEPOLIA).readContract({
      address: contracts.swapRouter!,
      abi: LocalSwapRouter.abi,
      functionName: 'rate',
      args: [option.tokenAddress, contracts.usde!],
      blockNumber: before,
    });
    const expectedUsde = (BigInt(option.amount) * rate) / 10n ** 18n;
    const expectedShares = await stack.chain(ETHEREUM_SEPOLIA).readContract({
      address: contracts.susde!,
      abi: LocalStakedUSDe.abi,
      functionName: 'previewDeposit',
      args: [expectedUsde],
      blockNumber: before,
    });
    expect(flushed.amountIn).toBe(BigInt(option.amount));
    expect(flushed.usdeAmount).toBe(expectedUsde);
    expect(flushed.bridged).toBe(false);
    expect(flushed.sharesOrNonce).toBe(expectedShares);
    expect((await susdeBalance(ETHEREUM_SEPOLIA, merchant)) - balanceBefore).toBe(expectedShares);
    expect(row.shares).toBe(expectedShares.toString());
    // The forwarder is empty: nothing is left to move twice.
    expect(
      await stack.chain(ETHEREUM_SEPOLIA).readContract({
        address: option.tokenAddress,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [option.depositAddress],
      }),
    ).toBe(0n);

    const summary = await stack.app.request(`/v1/merchants/me/sessions/${session.id}`, {
      headers: stack.merchant.auth,
    });
    expect(summary.body).toMatchObject({
      status: 'completed',
      txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      paidAt: expect.any(String),
    });
  });

  it('USDC on the Base Sepolia stand-in passes through bridging and completes with exact sUSDe on the settlement chain', async () => {
    const session = await createSession({ amount: '42' });
    const option = optionOf(session, BASE_SEPOLIA, 'USDC');
    const merchant = getAddress(stack.merchant.account.address);
    const balanceBefore = await susdeBalance(ETHEREUM_SEPOLIA, merchant);

    await payInFull(BASE_SEPOLIA, option);
    await confirm(BASE_SEPOLIA);
    const seen: string[] = [];
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      const status = (await stack.app.request(`/v1/sessions/${session.id}/status`)).body.status;
      if (seen.at(-1) !== status) seen.push(status);
      if (status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect({ seen, last: seen.at(-1) }).toMatchObject({ last: 'completed' });
    // The row says completed a moment before the workflow records it; its result marks the end.
    const handle = stack.temporal.workflow.getHandle(`session-${session.id}`);
    expect(await handle.result()).toMatchObject({ status: 'completed' });
    const statuses = await statusesRecorded(stack.temporal, session.id);
    expect(statuses).toEqual(expect.arrayContaining(['confirming', 'bridging', 'completed']));
    expect(statuses.indexOf('bridging')).toBeLessThan(statuses.indexOf('completed'));

    const { flushed, row } = await flushOf(session.id, BASE_SEPOLIA);
    expect(flushed.bridged).toBe(true);
    expect(flushed.usdeAmount).toBe(42n * 10n ** 18n);
    // Staked on the settlement chain by the delivery: shares exactly as the vault priced them then.
    const settlementChain = stack.chain(ETHEREUM_SEPOLIA);
    const [composed] = await settlementChain.getContractEvents({
      address: stack.contracts(ETHEREUM_SEPOLIA).stakingComposer!,
      abi: StakingComposer.abi,
      eventName: 'Composed',
      args: { sessionId: sessionIdToBytes16(session.id) },
      fromBlock: 0n,
    });
    const expectedShares = await settlementChain.readContract({
      address: stack.contracts(ETHEREUM_SEPOLIA).susde!,
      abi: LocalStakedUSDe.abi,
      functionName: 'previewDeposit',
      args: [flushed.usdeAmount],
      blockNumber: composed!.blockNumber - 1n,
    });
    const received = (await susdeBalance(ETHEREUM_SEPOLIA, merchant)) - balanceBefore;
    expect(received).toBe(expectedShares);
    expect(row.shares).toBe(received.toString());
  });

  const retry = (sessionId: string, auth = stack.merchant.auth) =>
    stack.app.request(`/v1/merchants/me/sessions/${sessionId}/retry-forwarder`, {
      method: 'POST',
      headers: auth,
    });

  it('a swap rate that breaks minAmountOut fails the session with the reason; after the rate is fixed, retry-forwarder completes it', async () => {
    const contracts = stack.contracts(ETHEREUM_SEPOLIA);
    const owner = testChainClient(
      stack.rpcUrls[ETHEREUM_SEPOLIA]!,
      ETHEREUM_SEPOLIA,
      ANVIL_DEV_ACCOUNTS[0].privateKey,
    );
    const setRate = async (rateE18: bigint) => {
      const hash = await owner.writeContract({
        address: contracts.swapRouter!,
        abi: LocalSwapRouter.abi,
        functionName: 'setRate',
        args: [contracts.usdt!, contracts.usde!, rateE18],
      });
      await owner.waitForTransactionReceipt({ hash });
    };
    const par = 10n ** 30n;
    await setRate((par * 98n) / 100n); // 2 % below parity: beyond the 0.5 % slippage allowed
    try {
      const session = await createSession({ amount: '10', paymentOptionSymbols: ['USDT'] });
      const option = optionOf(session, ETHEREUM_SEPOLIA, 'USDT');
      await payInFull(ETHEREUM_SEPOLIA, option);
      await confirm(ETHEREUM_SEPOLIA);
      await waitForStatus(session.id, ['failed']);
      const failed = await stack.app.request(`/v1/merchants/me/sessions/${session.id}`, {
        headers: stack.merchant.auth,
      });
      expect(failed.body.failureReason).toMatch(
        /^InsufficientOutput\(9800000000000000000, 9950000000000000000\)$/,
      );
      // The funds wait in the (deployed) forwarder.
      expect(
        await stack.chain(ETHEREUM_SEPOLIA).readContract({
          address: option.tokenAddress,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [option.depositAddress],
        }),
      ).toBe(BigInt(option.amount));

      await setRate(par);
      const accepted = await retry(session.id);
      expect(accepted.status).toBe(202);
      expect(accepted.body).toEqual({ id: session.id, accepted: true, action: 'retrying' });
      await waitForStatus(session.id, ['completed']);
      const { flushed } = await flushOf(session.id, ETHEREUM_SEPOLIA);
      expect(flushed.usdeAmount).toBe(10n * 10n ** 18n);
      const completed = await stack.app.request(`/v1/merchants/me/sessions/${session.id}`, {
        headers: stack.merchant.auth,
      });
      expect(completed.body.failureReason).toBeNull();
    } finally {
      await setRate(par);
    }
  });

  it('retry-forwarder answers 409 for a session that is not retryable and 404 for another merchant’s session', async () => {
    const session = await createSession();
    const notRetryable = await retry(session.id);
    expect(notRetryable.status).toBe(409);
    expect(notRetryable.body.message).toMatch(
      /^Session is not in a retryable state \(status awaiting_payment/,
    );
    const other = await signInNewMerchant(stack.app);
    expect((await retry(session.id, other.auth)).status).toBe(404);
  });

  it('a deposit removed by a reorg before its confirmations is never acted on', async () => {
    const session = await createSession({ amount: '5' });
    const option = optionOf(session, ARBITRUM_SEPOLIA, 'USDC');
    const chain = stack.chain(ARBITRUM_SEPOLIA);
    const snapshot = await chain.snapshot();
    await payInFull(ARBITRUM_SEPOLIA, option);
    await chain.revert({ id: snapshot });
    await chain.mine({ blocks: 10 });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect((await stack.app.request(`/v1/sessions/${session.id}/status`)).body.status).toBe(
      'awaiting_payment',
    );
    expect(
      await stack.db.selectFrom('deposits').selectAll().where('session_id', '=', session.id).execute(),
    ).toEqual([]);

    // Paid for real afterwards: it settles.
    await payInFull(ARBITRUM_SEPOLIA, option);
    await confirm(ARBITRUM_SEPOLIA);
    await waitForStatus(session.id, ['completed']);
  });

  it('an underpayment waits for the rest; the session settles once the total covers the amount', async () => {
    const session = await createSession({ amount: '20' });
    const option = optionOf(session, ETHEREUM_SEPOLIA, 'USDC');
    const half = BigInt(option.amount) / 2n;
    await payDeposit(stack.chain(ETHEREUM_SEPOLIA), {
      token: option.tokenAddress,
      to: option.depositAddress,
      amount: half,
    });
    await confirm(ETHEREUM_SEPOLIA);
    await waitForDeposits(session.id, 1);
    expect((await stack.app.request(`/v1/sessions/${session.id}/status`)).body.status).toBe(
      'awaiting_payment',
    );

    await payDeposit(stack.chain(ETHEREUM_SEPOLIA), {
      token: option.tokenAddress,
      to: option.depositAddress,
      amount: BigInt(option.amount) - half,
    });
    await confirm(ETHEREUM_SEPOLIA);
    await waitForStatus(session.id, ['completed']);
    const { flushed } = await flushOf(session.id, ETHEREUM_SEPOLIA);
    expect(flushed.amountIn).toBe(BigInt(option.amount));
  });

  it('an overpayment settles in full: everything at the deposit address goes to the merchant', async () => {
    const session = await createSession({ amount: '8' });
    const option = optionOf(session, ETHEREUM_SEPOLIA, 'USDC');
    const paid = (BigInt(option.amount) * 3n) / 2n;
    await payDeposit(stack.chain(ETHEREUM_SEPOLIA), {
      token: option.tokenAddress,
      to: option.depositAddress,
      amount: paid,
    });
    await confirm(ETHEREUM_SEPOLIA);
    await waitForStatus(session.id, ['completed']);
    const { flushed } = await flushOf(session.id, ETHEREUM_SEPOLIA);
    expect(flushed.amountIn).toBe(paid);
    expect(flushed.usdeAmount).toBe(12n * 10n ** 18n);
  });

  it('a second deposit after settlement is recorded as late, and retry-forwarder settles it too', async () => {
    const session = await createSession({ amount: '3' });
    const option = optionOf(session, ETHEREUM_SEPOLIA, 'USDC');
    await payInFull(ETHEREUM_SEPOLIA, option);
    await confirm(ETHEREUM_SEPOLIA);
    await waitForStatus(session.id, ['completed']);

    await payDeposit(stack.chain(ETHEREUM_SEPOLIA), {
      token: option.tokenAddress,
      to: option.depositAddress,
      amount: 1_000_000n,
    });
    await confirm(ETHEREUM_SEPOLIA);
    const deposits = await waitForDeposits(session.id, 2);
    expect(deposits.map((deposit) => deposit.kind)).toEqual(['accepted', 'late']);
    expect((await stack.app.request(`/v1/sessions/${session.id}/status`)).body.status).toBe('completed');

    const accepted = await retry(session.id);
    expect(accepted.status).toBe(202);
    expect(accepted.body.action).toBe('settling_late_deposit');
    await waitForSettlements(session.id, 2);
    await waitForStatus(session.id, ['completed']);
    const rows = await stack.db
      .selectFrom('settlements')
      .selectAll()
      .where('session_id', '=', session.id)
      .orderBy('created_at')
      .execute();
    expect(rows.map((row) => row.amount_in)).toEqual([option.amount, '1000000']);
    expect(
      await stack.db
        .selectFrom('deposits')
        .select('settled_at')
        .where('session_id', '=', session.id)
        .where('settled_at', 'is', null)
        .execute(),
    ).toEqual([]);
  });

  it('a deposit after expiry is recorded, not lost; retry-forwarder settles it', async () => {
    const session = await createSession({ amount: '4' });
    const option = optionOf(session, ETHEREUM_SEPOLIA, 'USDC');
    // Expire it now: stop its workflow the way its timer would have, and move expiresAt into the past.
    await stack.temporal.workflow.getHandle(`session-${session.id}`).terminate('test: expiry');
    await sql`UPDATE sessions SET status = 'expired', expires_at = now() - interval '1 minute' WHERE id = ${session.id}`.execute(
      stack.db,
    );

    await payInFull(ETHEREUM_SEPOLIA, option);
    await confirm(ETHEREUM_SEPOLIA);
    const [late] = await waitForDeposits(session.id, 1);
    expect(late!.kind).toBe('late');
    expect((await stack.app.request(`/v1/sessions/${session.id}/status`)).body.status).toBe('expired');

    expect((await retry(session.id)).status).toBe(202);
    await waitForStatus(session.id, ['completed']);
    const summary = await stack.app.request(`/v1/merchants/me/sessions/${session.id}`, {
      headers: stack.merchant.auth,
    });
    expect(summary.body).toMatchObject({
      status: 'completed',
      paidAt: expect.any(String),
      txHash: late!.tx_hash,
    });
  });

  /**
   * Pays a session on Ethereum Sepolia with a worker process that is SIGKILLed once `killWhen` resolves;
   * a new worker must complete the session within `completeWithinMs`, settling it once. `killWhen` may
   * return what to do right after the kill (resume mining).
   */
  async function settlesAfterWorkerKilled({
    amountUsd,
    killWhen,
    completeWithinMs,
  }: {
    amountUsd: bigint;
    killWhen: (sessionId: string, depositAddress: Address) => Promise<(() => Promise<void>) | void>;
    completeWithinMs: number;
  }): Promise<void> {
    await stack.stopWorkers();
    const first = startWorkerProcess(stack.workerEnv);
    try {
      await waitForOutput(first, /worker polling/);
      // The worker keeps the maintenance schedules itself (a deployment that runs only workers has them),
      // under its prefix: the session reconciler that starts a lost session workflow runs every minute.
      const reconciler = await stack.temporal.schedule
        .getHandle(`${stack.prefix}${SESSION_RECONCILER_SCHEDULE_ID}`)
        .describe();
      expect(reconciler.action).toMatchObject({
        workflowType: 'sessionReconcilerWorkflow',
        taskQueue: taskQueueNames(stack.prefix).maintenance,
      });
      const session = await createSession({ amount: amountUsd.toString() });
      const option = optionOf(session, ETHEREUM_SEPOLIA, 'USDC');
      const merchant = getAddress(stack.merchant.account.address);
      const before = await susdeBalance(ETHEREUM_SEPOLIA, merchant);
      await payInFull(ETHEREUM_SEPOLIA, option);
      await confirm(ETHEREUM_SEPOLIA);
      const afterKill = await killWhen(session.id, option.depositAddress);
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));
      await afterKill?.();

      const second = startWorkerProcess(stack.workerEnv);
      try {
        await waitForStatus(session.id, ['completed'], completeWithinMs);
      } finally {
        second.kill('SIGTERM');
        await new Promise((resolve) => second.once('exit', resolve));
      }
      const rows = await stack.db
        .selectFrom('settlements')
        .selectAll()
        .where('session_id', '=', session.id)
        .execute();
      expect(rows).toHaveLength(1);
      expect((await susdeBalance(ETHEREUM_SEPOLIA, merchant)) - before).toBe(BigInt(rows[0]!.shares!));
      expect(BigInt(rows[0]!.usde_amount!)).toBe(amountUsd * 10n ** 18n);
    } finally {
      if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
      await stack.startWorkers();
    }
  }

  const hasCode = async (address: Address) => {
    const code = await stack.chain(ETHEREUM_SEPOLIA).getCode({ address });
    return code !== undefined && code !== '0x';
  };

  it('a worker killed (SIGKILL) right after deploying the forwarder: a new worker completes the session and the merchant is paid once', async () => {
    await settlesAfterWorkerKilled({
      amountUsd: 6n,
      killWhen: async (_sessionId, depositAddress) => {
        const deadline = Date.now() + 60_000;
        while (!(await hasCode(depositAddress)) && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 10));
      },
      completeWithinMs: 90_000,
    });
  }, 300_000);

  it('a worker killed while its flush transaction is pending: another worker takes the step over within the heartbeat timeout', async () => {
    const chain = stack.chain(ETHEREUM_SEPOLIA);
    const resumeMining = async () => {
      await chain.setAutomine(true);
      await chain.mine({ blocks: 1 });
    };
    await settlesAfterWorkerKilled({
      amountUsd: 7n,
      // Blocks are mined by hand until the forwarder exists, then not at all: the flush transaction the
      // worker sends (and records) stays pending while the worker waits for it.
      killWhen: async (sessionId, depositAddress) => {
        await chain.setAutomine(false);
        try {
          let flushTx: string | null = null;
          // Generous: on a loaded machine the worker process needs a while to detect, deploy and sign.
          const deadline = Date.now() + 120_000;
          while (!flushTx && Date.now() < deadline) {
            if (!(await hasCode(depositAddress))) await chain.mine({ blocks: 1 });
            const row = await stack.db
              .selectFrom('settlements')
              .select('flush_tx_hash')
              .where('session_id', '=', sessionId)
              .executeTakeFirst();
            flushTx = row?.flush_tx_hash ?? null;
            if (!flushTx) await new Promise((resolve) => setTimeout(resolve, 100));
          }
          expect(flushTx).not.toBeNull();
          expect(await chain.getTransactionReceipt({ hash: flushTx as Hex }).catch(() => null)).toBeNull();
        } catch (error) {
          await resumeMining();
          throw error;
        }
        return resumeMining;
      },
      // The dead worker's flush is still running as far as Temporal knows: without heartbeats it would be
      // retried only after its 5-minute start-to-close timeout.
      completeWithinMs: 60_000,
    });
  }, 300_000);

  async function waitForDeposits(sessionId: string, count: number) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await stack.db
        .selectFrom('deposits')
        .selectAll()
        .where('session_id', '=', sessionId)
        .orderBy('block_number')
        .execute();
      if (rows.length >= count || Date.now() > deadline) return rows;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async function waitForSettlements(sessionId: string, count: number) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await stack.db
        .selectFrom('settlements')
        .selectAll()
        .where('session_id', '=', sessionId)
        .where('usde_amount', 'is not', null)
        .execute();
      if (rows.length >= count || Date.now() > deadline) return rows;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
});
