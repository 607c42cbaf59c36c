import { type Address, erc20Abi } from 'viem';
import { readContract } from 'viem/actions';
import { readEthUsdRound } from '../../chain/priceFeeds';
import { PRICE_ANSWER_SCALE } from '../../money/usdPriceAnswers';
import type { NetworkRegistry } from '../../chain/networkRegistry';
import type { PublicClients } from '../../chain/publicClients';
import type { Config } from '../../config';
import type { Logger } from '../../logging/logger';
import type { PaymasterClient } from '../policy/clientChecks';
import { denial, type PaymasterDenial } from '../rpc/denials';
import type { UsdSnapshot } from '../limits/limits';
import { type EthUsdPrices, recentReadings } from './prices';
import { maxGasCostWei, maxTokenCharge, tokenGasRate, tokenToMicroUsd } from '../../money/gasPricing';
import { microToUsd, usdToMicro } from '../../money/microUsd';
import { feedAnswerToDecimal } from '../../money/usdPriceAnswers';

/**
 * The exchange rate of a user-paid (ERC-20) operation, priced when it is signed (issue 26, finding 8):
 * ETH/USD (paymaster/pricing/prices.ts, the price every sponsorship limit uses) over the token's USD price, in
 * the token's base units per 1e18 wei, plus PAYMASTER_TOKEN_RATE_MARGIN_BPS. The token's USD price is
 * its feed in PAYMASTER_TOKEN_USD_FEEDS (same freshness rule as ETH/USD), else its 1 USD peg. The
 * operation's maximum charge (the contract's pre-charge) is then held to the client's per-operation
 * dollar cap (`userPaidMaxOperationUsd`, else PAYMASTER_USER_PAID_MAX_OPERATION_USD).
 *
 * A token the API cannot price (not one of the chain's stablecoins, no feed configured) is left to the
 * signer: it refuses a token off its whitelist (SPEC rule 10) and signs a whitelisted one at its
 * configured rate.
 */

/** The token's USD price with ETH_USD_FEED_DECIMALS decimals: a stablecoin without a feed is at its peg. */
const PEG_ANSWER = PRICE_ANSWER_SCALE;

export type UserPaidPricing =
  /** `exchangeRate` undefined: not a token the API prices; the signer's whitelist decides. */
  { ok: true; exchangeRate?: bigint; snapshot?: UsdSnapshot } | { ok: false; denial: PaymasterDenial };

export interface UserPaidPricer {
  price(request: {
    client: PaymasterClient;
    chainId: number;
    token: Address;
    /** The gas as it will be signed (the paymaster limits raised to their floors). */
    gas: Parameters<typeof maxGasCostWei>[0];
  }): Promise<UserPaidPricing>;
}

/** The client's own cap binds when set (SPEC's suffix for a merchant-configured cap). */
const MERCHANT_CAP_SUFFIX = ' (merchant-configured cap)';

export function createUserPaidPricer({
  config,
  prices,
  publicClients,
  networks,
  logger,
  now = () => Date.now(),
}: {
  config: Config;
  prices: EthUsdPrices;
  publicClients: PublicClients;
  networks: NetworkRegistry;
  logger: Logger;
  now?: () => number;
}): UserPaidPricer {
  const feeds = new Map<string, Address>();
  for (const [chainId, tokens] of Object.entries(config.PAYMASTER_TOKEN_USD_FEEDS ?? {}))
    for (const [token, feed] of Object.entries(tokens))
      feeds.set(key(Number(chainId), token), feed as Address);
  const maxAge = BigInt(config.PAYMASTER_PRICE_MAX_AGE_SEC);
  const defaultCap = config.PAYMASTER_USER_PAID_MAX_OPERATION_USD;
  const decimalsRead = new Map<string, Promise<number | undefined>>();
  const reuseRecentFeedRead = recentReadings<string, bigint>(now);

  /** The chain's stablecoins have known decimals; a token with a configured feed is asked once. */
  const decimalsOf = (chainId: number, token: Address): Promise<number | undefined> => {
    const known = networks.byChainId(chainId)?.tokens.find((entry) => same(entry.address, token));
    if (known) return Promise.resolve(known.decimals);
    const id = key(chainId, token);
    const client = publicClients.forChain(chainId);
    if (!feeds.has(id) || !client) return Promise.resolve(undefined);
    let reading = decimalsRead.get(id);
    if (!reading) {
      reading = readContract(client, { address: token, abi: erc20Abi, functionName: 'decimals' }).then(
        Number,
        (error: unknown) => {
          logger.warn({ err: error, chainId, token }, 'ERC-20 gas token decimals read failed');
          decimalsRead.delete(id);
          return undefined;
        },
      );
      decimalsRead.set(id, reading);
    }
    return reading;
  };

  /** The token's USD answer: its feed's (fresh, positive) or the peg; undefined when the feed fails. */
  const tokenUsdAnswer = (chainId: number, token: Address): Promise<bigint | undefined> => {
    const id = key(chainId, token);
    const feed = feeds.get(id);
    if (!feed) return Promise.resolve(PEG_ANSWER);
    const client = publicClients.forChain(chainId);
    return reuseRecentFeedRead(id, async () => {
      if (!client) return undefined;
      try {
        const round = await readEthUsdRound(client, feed);
        return round.answer > 0n && round.blockTimestamp - round.updatedAt <= maxAge
          ? round.answer
          : undefined;
      } catch (error) {
        logger.warn({ err: error, chainId, feed }, 'token USD price feed read failed');
        return undefined;
      }
    });
  };

  return {
    async price({ client, chainId, token, gas }) {
      const decimals = await decimalsOf(chainId, token);
      if (decimals === undefined) return { ok: true };
      const [ethUsd, tokenUsd] = await Promise.all([prices.fresh(chainId), tokenUsdAnswer(chainId, token)]);
      if (!ethUsd)
        return unavailable(
          `no fresh ETH/USD price on chain ${chainId} to price gas in token ${token}; retry`,
        );
      if (tokenUsd === undefined)
        return unavailable(`no fresh USD price of token ${token} on chain ${chainId}; retry`);
      const exchangeRate = tokenGasRate({
        ethUsdAnswer: ethUsd.answer,
        tokenUsdAnswer: tokenUsd,
        tokenDecimals: decimals,
        marginBps: config.PAYMASTER_TOKEN_RATE_MARGIN_BPS,
      });
      // The most the sender can pay: the contract's pre-charge in tokens, valued at the token's price.
      const costWei = maxGasCostWei(gas);
      const maxChargeMicro = tokenToMicroUsd(maxTokenCharge(costWei, exchangeRate), tokenUsd, decimals);
      const snapshot: UsdSnapshot = {
        ethUsdPrice: feedAnswerToDecimal(ethUsd.answer),
        estimatedGasCostWei: costWei.toString(),
        estimatedCostUsd: microToUsd(maxChargeMicro),
      };
      const cap = client.userPaidMaxOperationUsd ?? defaultCap;
      if (maxChargeMicro > usdToMicro(cap)) {
        return {
          ok: false,
          denial: denial(
            'paymaster_merchant_tx_cap_exceeded',
            `the operation can cost its sender up to ${snapshot.estimatedCostUsd} USD in token ${token}, above the per-operation cap of ${microToUsd(usdToMicro(cap))} USD for user-paid gas${client.userPaidMaxOperationUsd !== null ? MERCHANT_CAP_SUFFIX : ''}`,
          ),
        };
      }
      return { ok: true, exchangeRate, snapshot };
    },
  };
}

const key = (chainId: number, token: string): string => `${chainId}:${token.toLowerCase()}`;
const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
const unavailable = (detail: string): UserPaidPricing => ({
  ok: false,
  denial: denial('paymaster_price_unavailable', detail),
});
