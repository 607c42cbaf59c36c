import type { Hex } from 'viem';
import type { OperatorClient } from '../chain/operatorChains';
import type { Db } from '../db/client';
import { withSenderLock } from '../db/senderLocks';

/**
 * Every transaction a worker sends with a shared key (the settlement operator, the yield deployer) is
 * numbered under that key's lock on that chain (db/senderLocks.ts), from the chain's pending count, and
 * broadcast before the lock is let go: the next sender, in this process or another worker, then reads a
 * count that includes it. No nonce is kept in memory, so any number of workers share one key without
 * two transactions ever taking the same nonce.
 */
export function withNextNonce<T>(
  db: Db,
  client: OperatorClient,
  work: (nonce: number, locked: Db) => Promise<T>,
): Promise<T> {
  const address = client.account.address;
  return withSenderLock(db, { chainId: client.chain.id, address }, async (locked) => {
    const nonce = await client.getTransactionCount({ address, blockTag: 'pending' });
    return work(nonce, locked);
  });
}

/** Signs a call with the key's next nonce and broadcasts it, under the key's lock; returns its hash. */
export function sendWithNextNonce(
  db: Db,
  client: OperatorClient,
  { to, data, value = 0n }: { to: Hex; data: Hex; value?: bigint },
): Promise<Hex> {
  return withNextNonce(db, client, async (nonce) => {
    const account = client.account;
    const prepared = await client.prepareTransactionRequest({
      account,
      chain: client.chain,
      to,
      data,
      value,
      nonce,
    });
    const serializedTransaction = await client.signTransaction({ ...prepared, account, chain: client.chain });
    return client.sendRawTransaction({ serializedTransaction });
  });
}
