import type { PublicClient } from 'viem';
import { setTimeout as delay } from 'node:timers/promises';
import { createPaymasterDeposits } from './deposits';

const ENTRY_POINT = '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108';
const PAYMASTER = '0x5aC4C5f366705e695DDDC0f37Bf2089c7C216b64';

/** A chain whose head and deposit the test sets, counting deposit reads. */
function fakeChain() {
  const chain = { head: 1n as bigint | Error, deposit: 100n, reads: 0, failRead: false };
  const client = {
    getBlockNumber: async () => {
      if (chain.head instanceof Error) throw chain.head;
      return chain.head;
    },
  } as unknown as PublicClient;
  const read = async () => {
    chain.reads += 1;
    if (chain.failRead) throw new Error('rpc down');
    return chain.deposit;
  };
  return { chain, client, read };
}

describe('paymaster deposits, read once per block', () => {
  it("reuses a block's read until the head moves, then reads the new figure", async () => {
    const { chain, client, read } = fakeChain();
    const deposits = createPaymasterDeposits({ publicClientFor: () => client, read, pollMs: 10 });
    try {
      await deposits.current(1, ENTRY_POINT, PAYMASTER); // head not known yet: read directly
      await delay(30);
      const before = chain.reads;
      for (let i = 0; i < 20; i++) expect(await deposits.current(1, ENTRY_POINT, PAYMASTER)).toBe(100n);
      expect(chain.reads - before).toBe(1);
      chain.deposit = 5n;
      chain.head = 2n;
      await delay(30);
      expect(await deposits.current(1, ENTRY_POINT, PAYMASTER)).toBe(5n);
      expect(chain.reads - before).toBe(2);
    } finally {
      deposits.stop();
    }
  });

  it("a fresh read bypasses the block's figure", async () => {
    const { chain, client, read } = fakeChain();
    const deposits = createPaymasterDeposits({ publicClientFor: () => client, read, pollMs: 10 });
    try {
      await deposits.current(1, ENTRY_POINT, PAYMASTER); // starts the chain's head watcher
      await delay(30);
      expect(await deposits.current(1, ENTRY_POINT, PAYMASTER)).toBe(100n);
      chain.deposit = 7n; // same block number: only a fresh read sees it
      expect(await deposits.current(1, ENTRY_POINT, PAYMASTER)).toBe(100n);
      expect(await deposits.current(1, ENTRY_POINT, PAYMASTER, { fresh: true })).toBe(7n);
    } finally {
      deposits.stop();
    }
  });

  it('reads every time while the head cannot be read, and never reuses a failed read', async () => {
    const { chain, client, read } = fakeChain();
    chain.head = new Error('no head');
    const deposits = createPaymasterDeposits({ publicClientFor: () => client, read, pollMs: 10 });
    try {
      await deposits.current(1, ENTRY_POINT, PAYMASTER);
      await delay(30);
      await deposits.current(1, ENTRY_POINT, PAYMASTER);
      await deposits.current(1, ENTRY_POINT, PAYMASTER);
      expect(chain.reads).toBe(3);
      chain.head = 3n;
      await delay(30);
      chain.failRead = true;
      await expect(deposits.current(1, ENTRY_POINT, PAYMASTER)).rejects.toThrow('rpc down');
      chain.failRead = false;
      expect(await deposits.current(1, ENTRY_POINT, PAYMASTER)).toBe(100n);
      expect(chain.reads).toBe(5);
    } finally {
      deposits.stop();
    }
  });
});
