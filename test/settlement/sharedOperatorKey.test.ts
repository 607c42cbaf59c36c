import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { erc20Abi, type Hex } from 'viem';
import { withSenderLock } from '../../db/senderLocks';
import { LOCAL_SETTLEMENT_OPERATOR } from '../../dev/chains/localSettlement';
import { ProjectProcess } from '../harness/projectProcess';
import { startSettlementStack, type SettlementStack } from './settlementStack';

/**
 * Any number of workers share one settlement operator key: every transaction of a key on a chain takes
 * its nonce under that key's lock in Postgres, across processes (db/senderLocks.ts,
 * activities/lockedSends.ts), so concurrent sends never collide and nothing is retried for a nonce.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;
const mintAbi = [
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
] as const;

describe('one operator key shared by several worker processes', () => {
  let stack: SettlementStack;
  beforeAll(async () => {
    stack = await startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA] });
  }, 180_000);
  afterAll(() => stack?.stop());

  /** Runs test/harness/lockedSenderMain.ts: `count` sends at once from `sendAt`; its hashes and errors. */
  function sendFromProcess(count: number, sendAt: number): Promise<{ hashes: Hex[]; errors: string[] }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/harness/lockedSenderMain.ts'], {
      cwd: join(__dirname, '..', '..'),
      env: {
        ...process.env,
        ...stack.workerEnv,
        SEND_CHAIN_ID: String(ETHEREUM_SEPOLIA),
        SEND_COUNT: String(count),
        SEND_AT: String(sendAt),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    return new Promise((resolve, reject) =>
      child.once('exit', (code) => {
        const line = output.split('\n').find((text) => text.startsWith('{"hashes"'));
        if (code !== 0 || !line) reject(new Error(`sender exited ${code}: ${output}`));
        else resolve(JSON.parse(line));
      }),
    );
  }

  it('two sender processes, twelve sends each at the same moment on one chain: every send goes out first time, each with its own nonce', async () => {
    const chain = stack.chain(ETHEREUM_SEPOLIA);
    const operator = LOCAL_SETTLEMENT_OPERATOR.address;
    const before = await chain.getTransactionCount({ address: operator, blockTag: 'pending' });
    // Both processes boot first (tsx takes seconds on this machine), then send at the same instant.
    const sendAt = Date.now() + 15_000;
    const [first, second] = await Promise.all([sendFromProcess(12, sendAt), sendFromProcess(12, sendAt)]);

    expect(first.errors).toEqual([]);
    expect(second.errors).toEqual([]);
    const hashes = [...first.hashes, ...second.hashes];
    expect(hashes).toHaveLength(24);
    const sent = await Promise.all(
      hashes.map(async (hash) => ({
        receipt: await chain.waitForTransactionReceipt({ hash }),
        transaction: await chain.getTransaction({ hash }),
      })),
    );
    expect(sent.every(({ receipt }) => receipt.status === 'success')).toBe(true);
    const nonces = sent.map(({ transaction }) => transaction.nonce).sort((a, b) => a - b);
    // 24 nonces in a row from where the key stood: none taken twice, none skipped.
    expect(nonces).toEqual(Array.from({ length: 24 }, (_, index) => before + index));
    expect(await chain.getTransactionCount({ address: operator, blockTag: 'latest' })).toBe(before + 24);
  }, 120_000);

  it('the lock serialises one key on one chain only: another chain and another key go on while it is held', async () => {
    const key = { chainId: ETHEREUM_SEPOLIA, address: LOCAL_SETTLEMENT_OPERATOR.address };
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = withSenderLock(stack.db, key, async () => {
      holding();
      await released;
    });
    await held;

    const timed = async (target: { chainId: number; address: string }) => {
      const started = Date.now();
      await withSenderLock(stack.db, target, async () => undefined, { waitMs: 5_000 });
      return Date.now() - started;
    };
    expect(await timed({ ...key, chainId: 84532 })).toBeLessThan(1_000);
    expect(await timed({ ...key, address: '0x000000000000000000000000000000000000dEaD' })).toBeLessThan(
      1_000,
    );
    // The same key on the same chain waits for the holder, and then gets it.
    const sameKey = timed(key);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    release();
    await holder;
    expect(await sameKey).toBeGreaterThanOrEqual(1_400);
    await expect(withSenderLock(stack.db, key, async () => 'held', { waitMs: 1_000 })).resolves.toBe('held');
  }, 30_000);

  it('two worker processes with one operator key settle eight sessions paid at once on one chain: every forwarder deploy and flush succeeds on its first attempt, each session settles once', async () => {
    await stack.stopWorkers();
    const workers = [1, 2].map(() => new ProjectProcess('dev/worker.ts', stack.workerEnv));
    try {
      // Two workers bundle their workflows at boot: minutes on a loaded 2-core machine.
      for (const worker of workers) worker.start();
      for (const worker of workers) await worker.waitForOutput(/worker polling/, 300_000);

      const sessions: Array<{
        id: string;
        option: { tokenAddress: Hex; depositAddress: Hex; amount: string };
      }> = [];
      for (let index = 0; index < 8; index++) {
        const created = await stack.app.request('/v1/sessions', {
          method: 'POST',
          headers: stack.sk,
          json: { amount: `${index + 1}`, sandboxMode: true },
        });
        expect(created.status).toBe(201);
        const read = await stack.app.request(`/v1/sessions/${created.body.id}`);
        const option = read.body.paymentOptions.find(
          (entry: { chainId: number; symbol: string }) =>
            entry.chainId === ETHEREUM_SEPOLIA && entry.symbol === 'USDC',
        );
        sessions.push({ id: created.body.id, option });
      }
      // Every payment in one block: the monitor signals the eight sessions in one scan, and their
      // forwarder deploys and flushes run at the same time on the two workers.
      const chain = stack.chain(ETHEREUM_SEPOLIA);
      const payer = chain.account.address;
      await chain.setAutomine(false);
      try {
        let nonce = await chain.getTransactionCount({ address: payer, blockTag: 'pending' });
        for (const { option } of sessions) {
          const amount = BigInt(option.amount);
          await chain.writeContract({
            address: option.tokenAddress,
            abi: mintAbi,
            functionName: 'mint',
            args: [payer, amount],
            nonce: nonce++,
            gas: 200_000n,
          });
          await chain.writeContract({
            address: option.tokenAddress,
            abi: erc20Abi,
            functionName: 'transfer',
            args: [option.depositAddress, amount],
            nonce: nonce++,
            gas: 200_000n,
          });
        }
        await chain.mine({ blocks: 1 });
      } finally {
        await chain.setAutomine(true);
      }
      await chain.mine({ blocks: CONFIRMATIONS + 1 });

      for (const { id } of sessions) {
        const deadline = Date.now() + 120_000;
        while ((await stack.app.request(`/v1/sessions/${id}/status`)).body.status !== 'completed') {
          if (Date.now() > deadline) throw new Error(`session ${id} did not complete`);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }

      const identities = new Set<string>();
      for (const { id } of sessions) {
        const history = await stack.temporal.workflow.getHandle(`session-${id}`).fetchHistory();
        const events = history.events ?? [];
        const typeOf = new Map<string, string>();
        for (const event of events) {
          const scheduled = event.activityTaskScheduledEventAttributes;
          if (scheduled) typeOf.set(String(event.eventId), scheduled.activityType!.name!);
        }
        const sends = events.flatMap((event) => {
          const started = event.activityTaskStartedEventAttributes;
          if (!started) return [];
          const type = typeOf.get(String(started.scheduledEventId));
          return type === 'deployForwarder' || type === 'flushForwarder' ? [{ type, ...started }] : [];
        });
        expect(sends.map(({ type }) => type).sort()).toEqual(['deployForwarder', 'flushForwarder']);
        for (const send of sends) {
          expect({ session: id, type: send.type, attempt: send.attempt }).toEqual({
            session: id,
            type: send.type,
            attempt: 1,
          });
          identities.add(send.identity!);
        }
        expect(events.some((event) => event.activityTaskFailedEventAttributes)).toBe(false);
      }
      // Both processes sent: the sends really were shared between two workers.
      expect(identities.size).toBe(2);

      const settled = await stack.db
        .selectFrom('settlements')
        .select(['session_id', 'flush_nonce', 'usde_amount'])
        .where(
          'session_id',
          'in',
          sessions.map(({ id }) => id),
        )
        .execute();
      expect(settled.map((row) => row.session_id).sort()).toEqual(sessions.map(({ id }) => id).sort());
      expect(settled.every((row) => row.usde_amount !== null)).toBe(true);
      expect(new Set(settled.map((row) => row.flush_nonce)).size).toBe(8);
    } finally {
      for (const worker of workers) await worker.kill('SIGTERM');
    }
  }, 600_000);
});
