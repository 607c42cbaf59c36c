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

/** A call from a shared key: no native value but a bridge fee. */
export interface OperatorCall {
  to: Hex;
  data: Hex;
  value?: bigint;
}

/** The most a transaction may cost: its gas limit and the fee per gas it is signed with at most. */
export interface GasBound {
  gas: bigint;
  maxFeePerGas: bigint;
}

/**
 * Signs `call` with `nonce` (taken under the key's lock): the raw transaction, to record and broadcast.
 * Within `bound`, when given, it can never cost more than gas × maxFeePerGas (a vault deploy's reservation).
 */
export async function signCallWithNonce(
  client: OperatorClient,
  { to, data, value = 0n }: OperatorCall,
  nonce: number,
  bound?: GasBound,
): Promise<Hex> {
  const account = client.account;
  const prepared = await client.prepareTransactionRequest({
    account,
    chain: client.chain,
    to,
    data,
    value,
    nonce,
    ...(bound && { gas: bound.gas }),
  });
  const fees = bound ? feesWithin(prepared, bound.maxFeePerGas) : {};
  return client.signTransaction({ ...prepared, ...fees, account, chain: client.chain } as typeof prepared);
}

/** The prepared fees, lowered to `maxFeePerGas` where they are above it (the tip never above the cap). */
function feesWithin(
  prepared: { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint; gasPrice?: bigint },
  maxFeePerGas: bigint,
): { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint; gasPrice?: bigint } {
  const min = (a: bigint, b: bigint) => (a < b ? a : b);
  if (prepared.maxFeePerGas !== undefined) {
    const cap = min(prepared.maxFeePerGas, maxFeePerGas);
    return { maxFeePerGas: cap, maxPriorityFeePerGas: min(prepared.maxPriorityFeePerGas ?? 0n, cap) };
  }
  return prepared.gasPrice === undefined ? {} : { gasPrice: min(prepared.gasPrice, maxFeePerGas) };
}

/** Signs a call with the key's next nonce and broadcasts it, under the key's lock; returns its hash. */
export function sendWithNextNonce(db: Db, client: OperatorClient, call: OperatorCall): Promise<Hex> {
  return withNextNonce(db, client, async (nonce) => {
    const serializedTransaction = await signCallWithNonce(client, call, nonce);
    return client.sendRawTransaction({ serializedTransaction });
  });
}
