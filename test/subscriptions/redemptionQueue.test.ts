import { createWalletClient, http, publicActions, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { baseSepolia } from 'viem/chains';
import type { OperatorClient } from '../../chain/operatorChains';
import { createDb, type Db } from '../../db/client';
import {
  createRedemptionQueue,
  RedemptionNotSentError,
  type QueuedRedemption,
} from '../../activities/redemptionQueue';
import { testStack } from '../harness/stack';
import { fundedExecutorKey, localChain } from './subscriberWorld';

/**
 * The executor's sends in batches (subscriptions/redemptionQueue.ts) on a local chain and the run's
 * database lock: nonces consecutive from the pending count, none skipped — a send whose claim lapsed takes
 * no nonce, and a broadcast the node refuses ends its batch unsent after it.
 */

describe('the executor’s redemption queue', () => {
  let db: Db;
  let client: OperatorClient;
  beforeAll(async () => {
    db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 4 });
    const { key } = await fundedExecutorKey();
    client = createWalletClient({
      account: privateKeyToAccount(key),
      chain: baseSepolia,
      transport: http(localChain().rpcUrl),
      pollingInterval: 100,
    }).extend(publicActions) as unknown as OperatorClient;
  });
  afterAll(() => db?.destroy());

  /** A plain value-less call to a fresh address (its own "redemption"); `gas` below 21,000 is refused by the node. */
  const call = (overrides: Partial<QueuedRedemption> = {}): QueuedRedemption => ({
    to: `0x${Math.random().toString(16).slice(2).padEnd(40, '0')}` as Address,
    data: '0x',
    gas: 21_000n,
    beforeSend: async () => true,
    ...overrides,
  });
  const nonceOf = async (hash: Hex) =>
    (await client.waitForTransactionReceipt({ hash }), await client.getTransaction({ hash })).nonce;
  const pendingNonce = () =>
    client.getTransactionCount({ address: client.account.address, blockTag: 'pending' });

  it('sends every queued call with consecutive nonces; a call whose claim lapsed takes none', async () => {
    const send = createRedemptionQueue(db);
    const first = await pendingNonce();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, index) => send(client, call({ beforeSend: async () => index !== 4 }))),
    );
    expect(outcomes[4]).toMatchObject({ status: 'rejected', reason: expect.any(RedemptionNotSentError) });
    const hashes = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    expect(hashes).toHaveLength(7);
    const nonces = await Promise.all(hashes.map(nonceOf));
    expect([...nonces].sort((a, b) => a - b)).toEqual(Array.from({ length: 7 }, (_, index) => first + index));
    expect(await pendingNonce()).toBe(first + 7);
  });

  it('a broadcast the node refuses ends its batch: the calls after it are not sent, no nonce is skipped', async () => {
    const send = createRedemptionQueue(db);
    const first = await pendingNonce();
    // The first call drains alone; the four queued meanwhile make the next batch.
    const alone = send(client, call());
    const batch = [call(), call({ gas: 1_000n }), call(), call()].map((queued) =>
      send(client, queued).then(
        (hash) => ({ hash }),
        (error: unknown) => ({ error }),
      ),
    );
    const [sentAlone, ...outcomes] = await Promise.all([alone, ...batch]);
    expect(await nonceOf(sentAlone as Hex)).toBe(first);
    expect(await nonceOf((outcomes[0] as { hash: Hex }).hash)).toBe(first + 1);
    expect(outcomes[1]).toMatchObject({ error: expect.anything() });
    expect((outcomes[1] as { error: unknown }).error).not.toBeInstanceOf(RedemptionNotSentError);
    expect(outcomes.slice(2)).toEqual([
      { error: expect.any(RedemptionNotSentError) },
      { error: expect.any(RedemptionNotSentError) },
    ]);
    expect(await pendingNonce()).toBe(first + 2);
    // The next send numbers from the pending count: no gap.
    expect(await nonceOf(await send(client, call()))).toBe(first + 2);
  });
});
