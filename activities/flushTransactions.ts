import { heartbeat, sleep } from '@temporalio/activity';
import { keccak256, type Hex, type TransactionReceipt } from 'viem';
import type { OperatorClient } from '../chain/operatorChains';
import type { Db } from '../db/client';
import { discardFlush, recordFlushSigned, type SettlementRow } from '../db/settlements';
import { signCallWithNonce, withNextNonce } from './lockedSends';

/**
 * A flush is a transaction that moves a customer's money, so it is never sent twice and never lost:
 * it is signed with the operator's next nonce and recorded (raw transaction, hash, nonce) before it is
 * broadcast, under the operator's lock on that chain. Whoever retries the step finds the record and
 * brings that same transaction to a receipt — re-broadcasting it if the node has forgotten it — instead
 * of making another.
 */

/** How long one attempt waits for a flush's receipt before the activity retry takes over. */
const RECEIPT_WAIT_MS = 120_000;
const POLL_MS = 500;

/**
 * Signs `data` (and `value` wei, a bridge fee) to `to` with the operator's next nonce, records it on `row`
 * and broadcasts it, all under the operator's lock on this chain (activities/lockedSends.ts), so a flush
 * of another worker cannot take the same nonce. A failed broadcast is left to awaitRecordedFlush, which
 * sends the recorded bytes again, or finds the nonce taken and discards the record.
 */
export function signAndRecordFlush(
  db: Db,
  client: OperatorClient,
  { row, to, data, value = 0n }: { row: SettlementRow; to: Hex; data: Hex; value?: bigint },
): Promise<SettlementRow> {
  return withNextNonce(db, client, async (nonce, locked) => {
    const rawTransaction = await signCallWithNonce(client, { to, data, value }, nonce);
    const txHash = keccak256(rawTransaction);
    await recordFlushSigned(locked, row.id, { rawTransaction, txHash, nonce });
    await client.sendRawTransaction({ serializedTransaction: rawTransaction }).catch(() => undefined);
    return {
      ...row,
      flush_raw_tx: rawTransaction,
      flush_tx_hash: txHash,
      flush_nonce: String(nonce),
    };
  });
}

/** A transaction signed and recorded before it was broadcast: what it takes to bring it to a receipt. */
export interface RecordedTransaction {
  hash: Hex;
  /** The sender's nonce it was signed with (null for records from before nonces were kept). */
  nonce: string | number | null;
  /** The signed bytes, to broadcast again (null when not kept). */
  rawTransaction: Hex | null;
  /** What it is, for the error a retry shows: "flush transaction", "deploy transaction". */
  what: string;
  /** Drops the record when another transaction took its nonce (it never happened). */
  discard(): Promise<void>;
}

/**
 * Brings a recorded transaction to its receipt: broadcasts it (again) whenever the node does not know it,
 * and waits. `dropped` when the sender's nonce was used by another transaction while ours was never mined
 * — it never happened, so the record is discarded (for a flush, the funds are still in the forwarder).
 */
export async function awaitRecordedTransaction(
  client: OperatorClient,
  recorded: RecordedTransaction,
): Promise<TransactionReceipt | 'dropped'> {
  const { hash } = recorded;
  const deadline = Date.now() + RECEIPT_WAIT_MS;
  for (;;) {
    const receipt = await client.getTransactionReceipt({ hash }).catch(() => null);
    if (receipt) return receipt;
    const known = await client.getTransaction({ hash }).catch(() => null);
    if (!known) {
      const mined = await client.getTransactionCount({ address: client.account.address, blockTag: 'latest' });
      if (recorded.nonce !== null && mined > Number(recorded.nonce)) {
        // Its nonce is spent; unless ours was mined in the meantime, another transaction took it.
        const late = await client.getTransactionReceipt({ hash }).catch(() => null);
        if (late) return late;
        await recorded.discard();
        return 'dropped';
      }
      // Recorded but never broadcast (a crash in between), or forgotten by the node: send it again.
      if (recorded.rawTransaction)
        await client
          .sendRawTransaction({ serializedTransaction: recorded.rawTransaction })
          .catch(() => undefined);
    }
    if (Date.now() > deadline)
      throw new Error(`${recorded.what} ${hash} has no receipt after ${RECEIPT_WAIT_MS} ms; retrying`);
    heartbeat();
    await sleep(POLL_MS);
  }
}

/** The recorded flush of `row` brought to its receipt (awaitRecordedTransaction). */
export function awaitRecordedFlush(
  db: Db,
  client: OperatorClient,
  row: SettlementRow,
): Promise<TransactionReceipt | 'dropped'> {
  return awaitRecordedTransaction(client, {
    hash: row.flush_tx_hash as Hex,
    nonce: row.flush_nonce,
    rawTransaction: row.flush_raw_tx as Hex | null,
    what: 'flush transaction',
    discard: () => discardFlush(db, row.id),
  });
}
