import { createPublicClient, createWalletClient, defineChain, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_DEV_ACCOUNTS, type StartAnvilChainsReturnType, startAnvilChains } from './anvil';
import { watchAnvilForStalls } from './anvilStallWatch';

/**
 * The stall of foundry-rs/foundry#10122 (a ready transaction automine leaves out) cannot be caused on purpose,
 * so these tests make the same state another way: a transaction held in the pool with automine off, then a
 * block gas limit it does not fit, then automine on. Anvil then sits with a ready transaction and no block.
 */

let anvil: StartAnvilChainsReturnType;
let rpcUrl: string;
const sender = privateKeyToAccount(ANVIL_DEV_ACCOUNTS[3].privateKey);

beforeAll(async () => {
  anvil = await startAnvilChains({ chains: [{ chainId: 31_390 }], silent: true });
  rpcUrl = anvil.chains[0]!.rpcUrl;
});

afterAll(async () => {
  await anvil?.stop();
});

function clients() {
  const chain = defineChain({
    id: 31_390,
    name: 'stall watch',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl), cacheTime: 0 });
  const wallet = createWalletClient({ chain, transport: http(rpcUrl), account: sender });
  const request = (method: string, params: unknown[] = []) =>
    publicClient.request({ method, params } as never) as Promise<unknown>;
  return { publicClient, wallet, request };
}

/** A watch looking every 150 ms, and the lines it reported. */
function watchReporting() {
  const reports: string[] = [];
  const watch = watchAnvilForStalls(rpcUrl, { intervalMs: 150, report: (line) => reports.push(line) });
  return { watch, reports };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DEFAULT_GAS_LIMIT = '0x1c9c380';

describe('watchAnvilForStalls', () => {
  it('mines a block when a ready transaction waits with automine on and no block comes, and says so', async () => {
    const { publicClient, wallet, request } = clients();
    const { watch, reports } = watchReporting();
    try {
      await request('evm_setAutomine', [false]);
      const hash: Hex = await wallet.sendTransaction({
        to: ANVIL_DEV_ACCOUNTS[4].address,
        value: 1n,
        gas: 100_000n,
      });
      await request('evm_setBlockGasLimit', ['0xc350']);
      await request('evm_setAutomine', [true]);
      await sleep(1_000);
      expect(watch.nudges).toBeGreaterThan(0);
      expect(reports[0]).toContain(`1 ready (${sender.address.toLowerCase()}: nonces`);
      expect(reports[0]).toContain('mined one to take the ready ones in');

      await request('evm_setBlockGasLimit', [DEFAULT_GAS_LIMIT]);
      const receipt = await publicClient.waitForTransactionReceipt({
        hash,
        timeout: 5_000,
        pollingInterval: 100,
      });
      expect(receipt.status).toBe('success');
    } finally {
      watch.stop();
      await request('evm_setBlockGasLimit', [DEFAULT_GAS_LIMIT]);
    }
  });

  it('leaves a transaction alone while automine is off: a test holding it in the pool keeps it there', async () => {
    const { publicClient, wallet, request } = clients();
    const { watch, reports } = watchReporting();
    try {
      await request('evm_setAutomine', [false]);
      const before = await publicClient.getBlockNumber();
      const hash = await wallet.sendTransaction({ to: ANVIL_DEV_ACCOUNTS[4].address, value: 1n });
      await sleep(1_000);
      expect(await publicClient.getBlockNumber()).toBe(before);
      expect(await publicClient.getTransactionReceipt({ hash }).catch(() => 'none')).toBe('none');
      expect(watch.nudges).toBe(0);
      expect(reports).toEqual([]);
      await request('evm_setAutomine', [true]);
      expect((await publicClient.waitForTransactionReceipt({ hash, timeout: 5_000 })).status).toBe('success');
    } finally {
      watch.stop();
      await request('evm_setAutomine', [true]);
    }
  });

  it('sends again, in nonce order, transactions the pool keeps queued though no nonce is missing', async () => {
    const { publicClient, wallet, request } = clients();
    const { watch, reports } = watchReporting();
    try {
      // The stuck state, made on purpose: sent with the next nonce but one, then the account's nonce moved up
      // under the pool, so nothing is missing and the pool never looks at the transaction again.
      const nonce = await publicClient.getTransactionCount({ address: sender.address });
      const transfer = { to: ANVIL_DEV_ACCOUNTS[4].address, value: 1n, gas: 21_000n } as const;
      const first = await wallet.sendTransaction({ ...transfer, nonce: nonce + 1 });
      const second = await wallet.sendTransaction({ ...transfer, nonce: nonce + 2 });
      await request('anvil_setNonce', [sender.address, `0x${(nonce + 1).toString(16)}`]);

      for (const hash of [first, second]) {
        const receipt = await publicClient.waitForTransactionReceipt({
          hash,
          timeout: 5_000,
          pollingInterval: 100,
        });
        expect(receipt.status).toBe('success');
      }
      expect(watch.resent).toBe(2);
      expect(reports[0]).toContain(
        `2 queued (${sender.address.toLowerCase()}: nonces ${nonce + 1}, ${nonce + 2})`,
      );
      expect(reports[0]).toContain(
        `sent ${sender.address.toLowerCase()}'s nonces ${nonce + 1}, ${nonce + 2} again`,
      );
    } finally {
      watch.stop();
    }
  });

  it('only reports a transaction queued behind a nonce nobody sent', async () => {
    const { publicClient, wallet, request } = clients();
    const { watch, reports } = watchReporting();
    try {
      const nonce = await publicClient.getTransactionCount({ address: sender.address });
      const before = await publicClient.getBlockNumber();
      await wallet.sendTransaction({
        to: ANVIL_DEV_ACCOUNTS[4].address,
        value: 1n,
        gas: 21_000n,
        nonce: nonce + 3,
      });
      await sleep(1_000);
      expect(watch.resent).toBe(0);
      expect(watch.nudges).toBe(0);
      expect(await publicClient.getBlockNumber()).toBe(before);
      expect(reports).toEqual([
        `[anvil ${rpcUrl}] no block for 150 ms with 0 ready, 1 queued (${sender.address.toLowerCase()}: nonces ${nonce + 3})`,
      ]);
    } finally {
      watch.stop();
      await request('anvil_removePoolTransactions', [sender.address]);
    }
  });

  it('never mines an idle chain', async () => {
    const { publicClient } = clients();
    const { watch } = watchReporting();
    const before = await publicClient.getBlockNumber();
    await sleep(800);
    watch.stop();
    expect(await publicClient.getBlockNumber()).toBe(before);
    expect(watch.nudges).toBe(0);
  });
});
