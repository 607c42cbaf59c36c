import type { Address, Hex } from 'viem';
import type { OperatorClient } from '../chain/operatorChains';
import type { Db } from '../db/client';
import { withNextNonce } from './lockedSends';

/**
 * The subscription executor's redemptions, numbered in batches (issue 42, the bench's 1,000 charges due at
 * once). Every send of the executor key is numbered under the key's lock across processes
 * (activities/lockedSends.ts); taken once per charge, with the gas estimate and the fee reads inside it,
 * the lock let about six charges a second through. Here the gas is estimated before the charge queues (it
 * does not depend on the nonce), and one holder of the lock sends every redemption queued in this process
 * meanwhile: one nonce read and one fee read per batch, then per redemption only its signature and its
 * broadcast, nonces consecutive from the pending count. Receipts are waited for outside the lock.
 *
 * Never a skipped nonce left behind: the next nonce is used only once the node accepted the one before it.
 * A redemption not signed (its claim lapsed, or an error) takes no nonce and the batch goes on; one whose
 * broadcast failed may or may not hold its nonce, so the batch ends there and the rest are rejected unsent
 * (their activities retry, numbered afresh under a later lock from the pending count, which includes
 * everything this batch broadcast). Never a double charge: the lock still
 * numbers every send, each redemption is its period's own (claimed, subscriptions/periodChargeClaim.ts),
 * and `beforeSend` re-checks the claim under the lock. The fees are read under the lock, once per batch, so a
 * redemption that waited in the queue is not sent with a stale fee that could leave it (and every later
 * nonce of the key) pending.
 */

/** The most redemptions one holder sends before it lets other processes' senders of the key in. */
const MAX_BATCH = 32;

export interface QueuedRedemption {
  to: Address;
  data: Hex;
  /** The gas limit, estimated before queueing. */
  gas: bigint;
  /** Called under the key's lock just before signing: false sends nothing (the attempt lost its claim). */
  beforeSend: () => Promise<boolean>;
}

export class RedemptionNotSentError extends Error {
  override name = 'RedemptionNotSentError';
}

interface Waiting {
  redemption: QueuedRedemption;
  resolve: (hash: Hex) => void;
  reject: (error: unknown) => void;
}

interface KeyQueue {
  waiting: Waiting[];
  draining: boolean;
}

export function createRedemptionQueue(db: Db) {
  const queues = new Map<string, KeyQueue>();

  async function sendBatch(client: OperatorClient, batch: Waiting[]): Promise<void> {
    await withNextNonce(db, client, async (firstNonce) => {
      const fees = await client.estimateFeesPerGas();
      let nonce = firstNonce;
      for (let index = 0; index < batch.length; index++) {
        const { redemption, resolve, reject } = batch[index]!;
        let serializedTransaction: Hex;
        try {
          // Nothing sent on either path: the nonce stays this one's successor's.
          if (!(await redemption.beforeSend())) throw new RedemptionNotSentError('the claim lapsed');
          serializedTransaction = await client.signTransaction({
            account: client.account,
            chain: client.chain,
            to: redemption.to,
            data: redemption.data,
            gas: redemption.gas,
            nonce,
            ...fees,
          } as Parameters<OperatorClient['signTransaction']>[0]);
        } catch (error) {
          reject(error);
          continue;
        }
        try {
          resolve(await client.sendRawTransaction({ serializedTransaction }));
          nonce++;
        } catch (error) {
          reject(error);
          // The node may or may not hold this nonce now: no later one goes out under it in this batch.
          for (const rest of batch.slice(index + 1)) {
            rest.reject(
              new RedemptionNotSentError('an earlier redemption of the batch may not have been sent'),
            );
          }
          return;
        }
      }
    });
  }

  async function drain(client: OperatorClient, queue: KeyQueue): Promise<void> {
    queue.draining = true;
    try {
      while (queue.waiting.length > 0) {
        const batch = queue.waiting.splice(0, MAX_BATCH);
        await sendBatch(client, batch).catch((error: unknown) => {
          // The lock or the nonce read failed: nothing of the batch was sent.
          for (const waiting of batch) waiting.reject(error);
        });
      }
    } finally {
      queue.draining = false;
    }
  }

  /** Sends the redemption with the key's next nonce (in the current or next batch); answers its hash. */
  return function sendRedemption(client: OperatorClient, redemption: QueuedRedemption): Promise<Hex> {
    const key = `${client.chain.id}:${client.account.address.toLowerCase()}`;
    let queue = queues.get(key);
    if (!queue) queues.set(key, (queue = { waiting: [], draining: false }));
    const sent = new Promise<Hex>((resolve, reject) => queue.waiting.push({ redemption, resolve, reject }));
    if (!queue.draining) void drain(client, queue);
    return sent;
  };
}

export type RedemptionQueue = ReturnType<typeof createRedemptionQueue>;
