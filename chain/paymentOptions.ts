import type { Address } from 'viem';
import { predictDepositAddress } from './depositAddress';
import type { StablecoinSymbol } from './stablecoins';
import type { ConfiguredNetwork } from './networkRegistry';
import { toBaseUnits } from '../money/baseUnits';

/** One way to pay a session: a token on a chain, the exact base-unit amount, the deposit address. */
export interface PaymentOption {
  chainId: number;
  network: string;
  symbol: StablecoinSymbol;
  tokenAddress: Address;
  decimals: number;
  /** Base units, decimal string (exact). */
  amount: string;
  depositAddress: Address;
  /** Where the option's forwarder pays out: the merchant's payout address, or the platform treasury for a top-up. */
  payoutAddress: Address;
  /** EIP-681 ERC-20 transfer request, for wallets and QR codes. */
  paymentUri: string;
}

/** `ethereum:<token>@<chainId>/transfer?address=<to>&uint256=<units>` (EIP-681). */
export function erc20PaymentUri({
  tokenAddress,
  chainId,
  to,
  amount,
}: {
  tokenAddress: Address;
  chainId: number;
  to: Address;
  amount: bigint;
}): string {
  return `ethereum:${tokenAddress}@${chainId}/transfer?address=${to}&uint256=${amount}`;
}

/**
 * Payment options = requested symbols × networks of the session's class with a forwarder factory.
 * One deposit address per (session, chain), shared by the tokens on that chain.
 */
export function buildPaymentOptions({
  sessionId,
  amountUsd,
  symbols,
  networks,
  payoutAddressOf,
  holdCapMicroUsd,
}: {
  sessionId: string;
  amountUsd: string;
  symbols: readonly StablecoinSymbol[];
  networks: ConfiguredNetwork[];
  /** The address the forwarder on `chainId` binds and settles to. */
  payoutAddressOf: (chainId: number) => Address;
  /**
   * A session that holds an overpayment: its deposit addresses are CappedForwarder clones settling at most this
   * many micro-dollars, so only networks with a capped forwarder factory offer it. Absent: today's Forwarder.
   */
  holdCapMicroUsd?: bigint;
}): PaymentOption[] {
  return networks.flatMap((network) => {
    const [factory, implementation] =
      holdCapMicroUsd === undefined
        ? [network.forwarderFactory, network.forwarderImplementation]
        : [network.cappedForwarderFactory, network.cappedForwarderImplementation];
    if (!factory || !implementation) return [];
    const payoutAddress = payoutAddressOf(network.chainId);
    const depositAddress = predictDepositAddress({
      factory,
      implementation,
      sessionId,
      chainId: network.chainId,
      merchant: payoutAddress,
      capMicroUsd: holdCapMicroUsd,
    });
    return network.tokens
      .filter((token) => symbols.includes(token.symbol))
      .map((token) => {
        // Stablecoins are priced 1:1 to USD: the USD amount in the token's decimals, exactly.
        const amount = toBaseUnits(amountUsd, token.decimals);
        return {
          chainId: network.chainId,
          network: network.network,
          symbol: token.symbol,
          tokenAddress: token.address,
          decimals: token.decimals,
          amount: amount.toString(),
          depositAddress,
          payoutAddress,
          paymentUri: erc20PaymentUri({
            tokenAddress: token.address,
            chainId: network.chainId,
            to: depositAddress,
            amount,
          }),
        };
      });
  });
}
