import type { Account, Chain, Client, Transport } from 'viem';
import { sendTransaction } from 'viem/actions';

/**
 * A wallet client whose transactions leave one after another, so the chain receives them in nonce order.
 *
 * Why: deployments send a wave of independent transactions at once (nonces from the account's nonce manager),
 * and each send estimates gas before it signs, so they reached anvil in any order. Anvil's pool can then keep
 * a transaction queued although its nonce gap has been filled (foundry-rs/foundry#10122): the deployment
 * waited on a receipt that never came. Sending in order never makes that gap. Only the sends are serialized:
 * receipts are still awaited together, and on anvil a send takes a few milliseconds.
 *
 * viem's writeContract and deployContract send through the client's own `sendTransaction`, so overriding it
 * covers them too.
 */
export function withSendsInNonceOrder<client extends Client<Transport, Chain, Account>>(
  wallet: client,
): client {
  let previous: Promise<unknown> = Promise.resolve();
  const inOrder = (base: client) => ({
    sendTransaction: (parameters: Parameters<typeof sendTransaction>[1]) => {
      const sent = previous.then(() => sendTransaction(base, parameters));
      previous = sent.catch(() => undefined);
      return sent;
    },
  });
  // The override keeps viem's signature (asserted by the return type); extend's own typing refuses overrides.
  return wallet.extend(inOrder as never) as client;
}
