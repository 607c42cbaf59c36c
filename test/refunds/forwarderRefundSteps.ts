import type { Address, Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { SettlementStack, testChainClient } from '../settlement/settlementStack';

/**
 * Steps of the tests that refund from a session's forwarder on a settlement stack (forwarderRefund,
 * heldOverpayment): polling, the payout address's signature over the refund as a wallet makes it, and the
 * wait for the relayed refund to end.
 */

/** A forwarder refund's EIP-712 typed data as the API gives it (uint256 values as decimal strings). */
export interface RefundTypedData {
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  types: Record<string, Array<{ name: string; type: string }>>;
  primaryType: 'Refund';
  message: { forwarder: Address; token: Address; to: Address; amount: string; refundId: Hex };
}

/** Polls `look` until it answers something, mining a block on `mineOn` between looks when given. */
export async function pollUntil<T>(
  look: () => Promise<T | undefined>,
  { mineOn, timeoutMs = 90_000 }: { mineOn?: ReturnType<typeof testChainClient>; timeoutMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await look();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    if (mineOn) await mineOn.mine({ blocks: 1 });
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Signs the refund's typed data as a wallet does with eth_signTypedData_v4 (the JSON as the API gives it);
 * `change` alters the message first, for a signature over another refund.
 */
export function signRefund(
  account: PrivateKeyAccount,
  typedData: RefundTypedData,
  change: Partial<RefundTypedData['message']> = {},
): Promise<Hex> {
  const { EIP712Domain: _domainType, ...types } = typedData.types;
  const message = { ...typedData.message, ...change };
  return account.signTypedData({
    domain: typedData.domain,
    types,
    primaryType: 'Refund',
    message: { ...message, amount: BigInt(message.amount) },
  });
}

/** The refund's row once it succeeded or failed, mining blocks on `chain` meanwhile so its relay confirms. */
export function refundEnded(
  stack: SettlementStack,
  chain: ReturnType<typeof testChainClient>,
  refundId: string,
) {
  return pollUntil(
    async () => {
      const row = await stack.db
        .selectFrom('refunds')
        .selectAll()
        .where('id', '=', refundId)
        .executeTakeFirstOrThrow();
      return row.status === 'succeeded' || row.status === 'failed' ? row : undefined;
    },
    { mineOn: chain },
  );
}
