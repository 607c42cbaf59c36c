import { getAddress, isAddressEqual, keccak256, type Address, type Hex } from 'viem';
import {
  ForwarderRefundRefusedError,
  isForwarderRefundIdUsed,
  relayForwarderRefund,
  type ForwarderRefund,
} from '../chain/forwarderRefunds';
import { Forwarder } from '../contracts/artifacts';
import type { Db } from '../db/client';
import {
  discardRefundRelay,
  findRefundById,
  recordRefundRelayFound,
  recordRefundRelaySigned,
  refundableOptionsOf,
  type RefundRow,
} from '../db/refunds';
import { forwarderRefundOf } from '../webhooks/refundObject';
import { deployForwarder } from './forwarderSteps';
import { signCallWithNonce, withNextNonce } from './lockedSends';
import type { SettlementStepContext } from './settlementSteps';

/**
 * The operator's relay of an authorized forwarder refund (docs/operations.md "Forwarder refunds and sweeps"):
 * a transaction that moves a customer's money, so, like a flush, it is never sent twice and never lost. Under
 * the operator's nonce lock on the chain it looks at the forwarder first (refund id already used: the relay
 * happened, find it), simulates the call (a refusal sends nothing), signs it with the next nonce and records
 * it (raw bytes, hash, nonce) before it is broadcast. A later look brings that recorded transaction to a
 * receipt — broadcasting it again when the node forgot it — or, when its nonce went to another transaction,
 * forgets it and relays again from the top (where the used refund id stops a second payment).
 */

export type RelayOutcome =
  /** Recorded and broadcast, or found already paid: wait for its receipt and confirmations. */
  | { sent: true }
  /** The forwarder refuses it (the simulation reverted): nothing was sent. */
  | { sent: false; reason: string };

export type RecordedRelayState = 'mined' | 'pending' | 'discarded';

/** Relays the processing forwarder refund `row`, which has no relay recorded yet. */
export async function relayAuthorizedRefund(
  context: SettlementStepContext,
  row: RefundRow,
): Promise<RelayOutcome> {
  const chainId = row.chain_id!;
  // Money at a deposit address of a session that never settled has no forwarder code yet: deploy it (anyone may).
  const deployed = await deployForwarder(context, { sessionId: row.session_id, chainId });
  if (!isAddressEqual(deployed, row.forwarder_address! as Address))
    return {
      sent: false,
      reason: `the session's forwarder on chain ${chainId} is ${deployed}, not the refund's ${getAddress(row.forwarder_address!)}`,
    };
  const client = context.operator.client(chainId);
  return withNextNonce(context.db, client, async (nonce, locked) => {
    const current = await findRefundById(locked, row.id);
    // Another attempt recorded its relay first, or the refund ended meanwhile.
    if (!current || current.status !== 'processing' || current.tx_hash) return { sent: true };
    const refund = forwarderRefundOf(current);
    if (await isForwarderRefundIdUsed(client, refund)) {
      const txHash = await findRefundedTransaction(context.db, client, current, refund);
      if (!txHash)
        throw new Error(
          `refund ${row.id} is used on chain but its Refunded event is not found yet; retrying`,
        );
      await recordRefundRelayFound(locked, { refundId: row.id, txHash, now: new Date() });
      return { sent: true };
    }
    try {
      await relayForwarderRefund(
        client,
        { refund, signature: current.authorization_signature! as Hex },
        {
          send: async (call) => {
            const rawTransaction = await signCallWithNonce(client, call, nonce);
            const txHash = keccak256(rawTransaction);
            await recordRefundRelaySigned(locked, {
              refundId: row.id,
              rawTransaction,
              txHash,
              nonce,
              now: new Date(),
            });
            await client.sendRawTransaction({ serializedTransaction: rawTransaction }).catch(() => undefined);
            return txHash;
          },
        },
      );
    } catch (error) {
      if (error instanceof ForwarderRefundRefusedError) return { sent: false, reason: error.message };
      throw error;
    }
    return { sent: true };
  });
}

/**
 * Where a recorded relay stands: mined (its receipt exists), pending (known to the node, or broadcast again
 * now), or discarded (its nonce went to another transaction while it was never mined: the next look relays
 * again, checking the forwarder's used refund ids first).
 */
export async function bringRecordedRelayToChain(
  context: SettlementStepContext,
  row: RefundRow,
): Promise<RecordedRelayState> {
  const client = context.operator.client(row.chain_id!);
  const hash = row.tx_hash! as Hex;
  if (await client.getTransactionReceipt({ hash }).catch(() => null)) return 'mined';
  if (await client.getTransaction({ hash }).catch(() => null)) return 'pending';
  if (row.relay_nonce === null) return 'pending';
  const mined = await client.getTransactionCount({ address: client.account.address, blockTag: 'latest' });
  if (mined > Number(row.relay_nonce)) {
    if (await client.getTransactionReceipt({ hash }).catch(() => null)) return 'mined';
    await discardRefundRelay(context.db, { refundId: row.id, txHash: hash });
    return 'discarded';
  }
  // Recorded but never broadcast (a crash in between), or forgotten by the node: the same bytes again.
  if (row.relay_raw_tx)
    await client
      .sendRawTransaction({ serializedTransaction: row.relay_raw_tx as Hex })
      .catch(() => undefined);
  return 'pending';
}

/** The transaction that paid this refund id, from the forwarder's Refunded events since the option's first deposit. */
async function findRefundedTransaction(
  db: Db,
  client: ReturnType<SettlementStepContext['operator']['client']>,
  row: RefundRow,
  refund: ForwarderRefund,
): Promise<Hex | undefined> {
  const option = (await refundableOptionsOf(db, row.session_id)).find(
    (candidate) => candidate.chainId === refund.chainId && candidate.tokenAddress === row.token_address,
  );
  const logs = await client.getContractEvents({
    address: refund.forwarder,
    abi: Forwarder.abi,
    eventName: 'Refunded',
    args: { refundId: refund.refundId },
    fromBlock: option?.firstDepositBlock ?? 0n,
  });
  return logs[0]?.transactionHash ?? undefined;
}
