import {
  decodeEventLog,
  erc20Abi,
  getAddress,
  isAddressEqual,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';

/**
 * Whether a transaction a merchant reports pays a refund (issue 41): its receipt, on the refund's chain,
 * succeeded and holds a Transfer log of exactly the refund's token, to exactly its address, of exactly its
 * amount in base units. The merchant's word is never taken: the answer is read from the chain each time.
 */

export interface ExpectedRefundTransfer {
  txHash: Hex;
  token: Address;
  to: Address;
  amount: bigint;
}

export type RefundTransferCheck =
  | { found: true; blockNumber: bigint; confirmations: bigint }
  /** `mined`: the receipt exists and is not the refund's transfer; otherwise no receipt (yet, or after a reorg). */
  | { found: false; mined: boolean; reason: string };

/** The refusal of a mined transaction that is not a successful transfer of the refund. */
function refusal(reason: string): RefundTransferCheck {
  return { found: false, mined: true, reason };
}

/** Each Transfer log of the receipt as (token, to, value). */
function transfersOf(logs: readonly { address: Address; topics: [Hex, ...Hex[]] | []; data: Hex }[]) {
  return logs.flatMap((log) => {
    try {
      const decoded = decodeEventLog({
        abi: erc20Abi,
        eventName: 'Transfer',
        topics: log.topics,
        data: log.data,
      });
      return [{ token: log.address, to: decoded.args.to, value: decoded.args.value }];
    } catch {
      return [];
    }
  });
}

export async function checkRefundTransfer(
  client: PublicClient,
  expected: ExpectedRefundTransfer,
): Promise<RefundTransferCheck> {
  const receipt = await client.getTransactionReceipt({ hash: expected.txHash }).catch(() => undefined);
  if (!receipt)
    return {
      found: false,
      mined: false,
      reason: 'no mined transaction with this hash on the refund’s chain',
    };
  if (receipt.status !== 'success') return refusal('the transaction reverted');
  const transfers = transfersOf(receipt.logs);
  const exact = transfers.find(
    (transfer) =>
      isAddressEqual(transfer.token, expected.token) &&
      isAddressEqual(transfer.to, expected.to) &&
      transfer.value === expected.amount,
  );
  if (!exact) {
    const toAddress = transfers.filter((transfer) => isAddressEqual(transfer.to, expected.to));
    if (toAddress.length === 0)
      return refusal(`the transaction transfers nothing to the refund address ${expected.to}`);
    if (!toAddress.some((transfer) => isAddressEqual(transfer.token, expected.token)))
      return refusal(
        `the transaction transfers another token than the refund’s (${getAddress(expected.token)})`,
      );
    return refusal(
      `the transaction transfers another amount than the refund’s ${expected.amount} base units`,
    );
  }
  const head = await client.getBlockNumber();
  return { found: true, blockNumber: receipt.blockNumber, confirmations: head - receipt.blockNumber + 1n };
}
