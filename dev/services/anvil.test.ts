import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, defineChain, http } from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { ANVIL_DEV_ACCOUNTS, AnvilStartError, type AnvilChain, startAnvilChains } from './anvil';

const stateDirs: string[] = [];
function newStateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-state-'));
  stateDirs.push(dir);
  return dir;
}

/** Ids of the anvil processes this process has spawned and not yet reaped (Linux /proc). */
function childAnvils(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        // stat: "pid (comm) state ppid ..."
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [, comm, rest] = /^\d+ \((.*)\) (.*)$/.exec(stat.trim()) ?? [];
        const parent = Number(rest?.split(' ')[1]);
        return comm === 'anvil' && parent === process.pid ? [Number(pid)] : [];
      } catch {
        return [];
      }
    });
}

afterAll(() => {
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

function clientsFor({ chainId, rpcUrl }: AnvilChain) {
  const chain = defineChain({
    id: chainId,
    name: `test ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return {
    publicClient: createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 100 }),
    walletClient: createWalletClient({
      chain,
      transport: http(rpcUrl),
      account: privateKeyToAccount(ANVIL_DEV_ACCOUNTS[0].privateKey),
    }),
  };
}

describe('ANVIL_DEV_ACCOUNTS', () => {
  it('are the accounts of the "test … junk" mnemonic, in order', () => {
    const mnemonic = 'test test test test test test test test test test test junk';
    ANVIL_DEV_ACCOUNTS.forEach(({ address, privateKey }, addressIndex) => {
      expect(mnemonicToAccount(mnemonic, { addressIndex }).address).toBe(address);
      expect(privateKeyToAccount(privateKey).address).toBe(address);
    });
  });
});

describe('startAnvilChains', () => {
  it('starts one chain per id on its own port, each answering its chain id, and stops them', async () => {
    const anvil = await startAnvilChains({ chains: [{ chainId: 31337 }, { chainId: 8453 }], silent: true });
    try {
      expect(anvil.chains.map(({ chainId }) => chainId)).toEqual([31337, 8453]);
      expect(new Set(anvil.chains.map(({ port }) => port)).size).toBe(2);
      for (const chain of anvil.chains) {
        expect(chain.rpcUrl).toBe(`http://127.0.0.1:${chain.port}`);
        const { publicClient } = clientsFor(chain);
        expect(await publicClient.getChainId()).toBe(chain.chainId);
        expect(await publicClient.getBalance({ address: ANVIL_DEV_ACCOUNTS[0].address })).toBe(
          10_000n * 10n ** 18n,
        );
      }
    } finally {
      await anvil.stop();
    }
    for (const { rpcUrl } of anvil.chains) {
      await expect(fetch(rpcUrl, { method: 'POST' })).rejects.toThrow();
    }
    expect(childAnvils()).toEqual([]);
  });

  it('keeps a chain state in stateDir across a restart, with interval mining', async () => {
    const stateDir = newStateDir();
    const recipient = '0x000000000000000000000000000000000000f00d';
    const first = await startAnvilChains({
      chains: [{ chainId: 31337 }],
      blockTime: 1,
      stateDir,
      silent: true,
    });
    let minedAt: bigint;
    try {
      const { publicClient, walletClient } = clientsFor(first.chains[0]!);
      const hash = await walletClient.sendTransaction({ to: recipient, value: 1_500_000_000_000_000_001n });
      minedAt = (await publicClient.waitForTransactionReceipt({ hash })).blockNumber;
    } finally {
      await first.stop();
    }

    const second = await startAnvilChains({
      chains: [{ chainId: 31337 }],
      blockTime: 1,
      stateDir,
      silent: true,
    });
    try {
      const { publicClient, walletClient } = clientsFor(second.chains[0]!);
      expect(await publicClient.getBalance({ address: recipient })).toBe(1_500_000_000_000_000_001n);
      expect(await publicClient.getBlockNumber()).toBeGreaterThanOrEqual(minedAt);
      expect(await publicClient.getTransactionCount({ address: ANVIL_DEV_ACCOUNTS[0].address })).toBe(1);
      // The restored chain keeps mining: a new transaction is included after the restored blocks.
      const hash = await walletClient.sendTransaction({ to: recipient, value: 1n });
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      expect(receipt.blockNumber).toBeGreaterThan(minedAt);
      expect(await publicClient.getBalance({ address: recipient })).toBe(1_500_000_000_000_000_002n);
    } finally {
      await second.stop();
    }
  });

  it('rejects with anvil’s own error when a chain cannot start, and leaves no chain running', async () => {
    const stateDir = newStateDir();
    writeFileSync(join(stateDir, '31338.json'), '{not json');
    const attempt = startAnvilChains({
      chains: [{ chainId: 31337 }, { chainId: 31338 }],
      stateDir,
      silent: true,
    });
    await expect(attempt).rejects.toThrow(AnvilStartError);
    await expect(attempt).rejects.toThrow(
      /chain 31338 did not start: exited \(2\)\n.*failed to parse json file/,
    );
    expect(childAnvils()).toEqual([]);
  });

  it('refuses the same chain id twice', async () => {
    await expect(
      startAnvilChains({ chains: [{ chainId: 1 }, { chainId: 1 }], silent: true }),
    ).rejects.toThrow(/duplicate chain ids/);
  });
});
