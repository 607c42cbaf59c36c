import { createPublicClient, http, type PublicClient } from 'viem';
import { testStack } from '../test/harness/stack';
import { createChainClocks } from './chainClock';

/**
 * The chain's time that policy budget periods start by (docs/decisions.md "Policy budgets by period
 * (issue 43, item 4)"): the latest block's timestamp of a real local chain, read once for a burst of
 * requests, reused for a second, and never reused when the read failed.
 */
describe('createChainClocks', () => {
  const chain = () => testStack().chains[0]!;

  /** The local chain's client, counting block reads; `failing` makes the reads throw. */
  function countingClients() {
    const client = createPublicClient({ transport: http(chain().rpcUrl) });
    const reads = { count: 0, failing: false };
    const counted = {
      getBlock: async (args: Parameters<PublicClient['getBlock']>[0]) => {
        reads.count += 1;
        if (reads.failing) throw new Error('connection refused');
        return client.getBlock(args);
      },
    } as unknown as PublicClient;
    return {
      reads,
      client,
      publicClients: { forChain: (id: number) => (id === chain().chainId ? counted : undefined) },
    };
  }

  it("answers the latest block's time; a burst of requests shares one read, reused for a second", async () => {
    const { reads, client, publicClients } = countingClients();
    let now = 1_000_000;
    const clocks = createChainClocks({ publicClients, now: () => now });
    const times = await Promise.all(Array.from({ length: 20 }, () => clocks.latest(chain().chainId)));
    const latest = await client.getBlock({ blockTag: 'latest' });
    expect(new Set(times.map((time) => time!.getTime())).size).toBe(1);
    expect(times[0]!.getTime()).toBeLessThanOrEqual(Number(latest.timestamp) * 1000);
    expect(reads.count).toBe(1);

    now += 999;
    await clocks.latest(chain().chainId);
    expect(reads.count).toBe(1);
    now += 1;
    await clocks.latest(chain().chainId);
    expect(reads.count).toBe(2);
  });

  it('a chain that cannot be read answers undefined, and the next request reads again', async () => {
    const { reads, publicClients } = countingClients();
    const clocks = createChainClocks({ publicClients, now: () => 5_000 });
    reads.failing = true;
    expect(await clocks.latest(chain().chainId)).toBeUndefined();
    reads.failing = false;
    expect(await clocks.latest(chain().chainId)).toBeInstanceOf(Date);
    expect(reads.count).toBe(2);
    // A chain without an RPC has no time either.
    expect(await clocks.latest(999_999)).toBeUndefined();
  });
});
