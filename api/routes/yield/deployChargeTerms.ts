import type { YieldDeploymentRow } from '../../../db/yieldDeployments';
import type { DeployChargeTerms } from '../../../db/yieldDeployCharges';
import { deployChargeTerms } from '../../../yield/deployCharge';
import type { YieldNetwork } from '../../../yield/deployOptions';
import type { AppContext } from '../../appContext';
import { serviceUnavailable } from '../../httpErrors';

/**
 * The deploy's gas bound at the chain's fees now and, on a mainnet, its maximum charge at the fresh ETH/USD
 * price with the paymaster's markup (yield/deployCharge.ts). Without fees or a price there is no bound to
 * hold: 503, nothing queued.
 */
export async function deployChargeTermsNow(
  app: AppContext,
  row: YieldDeploymentRow,
  { network }: YieldNetwork,
): Promise<DeployChargeTerms> {
  const chainId = row.chain_id;
  const [fees, price] = await Promise.all([
    app.chainFees.current(chainId),
    network.testnet ? undefined : app.ethUsdPrices.fresh(chainId),
  ]);
  if (!fees) {
    throw serviceUnavailable(
      `Gas fees on chain ${chainId} cannot be read; nothing was queued, retry shortly`,
    );
  }
  if (!network.testnet && !price) {
    throw serviceUnavailable(
      `No fresh ETH/USD price on chain ${chainId} to charge the deploy at; nothing was queued, retry shortly`,
    );
  }
  return deployChargeTerms({
    vaults: row.tokens.length,
    gasPerVault: app.config.YIELD_DEPLOY_GAS_PER_VAULT,
    fees,
    ...(price && {
      mainnetPricing: { ethUsdAnswer: price.answer, markupBps: app.config.PAYMASTER_MARKUP_BPS },
    }),
  });
}
