import { gasChargeMicroUsd } from '../money/gasPricing';
import type { ChainFeeLevel } from '../chain/operationBounds';

/**
 * What a vault deploy may cost, fixed when it is queued (security review III, finding 2): its transaction
 * is signed with at most `gasLimit` gas at at most `maxFeePerGas`, so `reservedWei` bounds what the
 * platform's deployer pays, whatever the chain does meanwhile. That bound counts in the chain's daily deploy
 * budget; on a mainnet its price (ETH/USD when queued, plus the paymaster's markup) is held against the
 * merchant's prepaid balance, and the actual cost is charged at that same price, so the charge never
 * exceeds the hold.
 */
export interface DeployChargeTerms {
  gasLimit: bigint;
  maxFeePerGas: bigint;
  reservedWei: bigint;
  /** Mainnets only: the maximum charge and what it is priced at. */
  prepaid?: DeployPrepaidTerms;
}

export interface DeployPrepaidTerms {
  /** USD per ETH with the feed's 8 decimals. */
  ethUsdAnswer: bigint;
  markupBps: number;
  /** The most the deploy can be charged, in micro-dollars (markup included). */
  maxChargeMicro: bigint;
}

export function deployChargeTerms({
  vaults,
  gasPerVault,
  fees,
  mainnetPricing,
}: {
  vaults: number;
  gasPerVault: number;
  fees: ChainFeeLevel;
  mainnetPricing?: { ethUsdAnswer: bigint; markupBps: number };
}): DeployChargeTerms {
  const gasLimit = BigInt(vaults) * BigInt(gasPerVault);
  // Room for the base fee to double before the transaction is sent, as wallets and the paymaster's fee bound allow.
  const maxFeePerGas = 2n * fees.baseFeePerGas + fees.maxPriorityFeePerGas;
  const reservedWei = gasLimit * maxFeePerGas;
  if (!mainnetPricing) return { gasLimit, maxFeePerGas, reservedWei };
  return {
    gasLimit,
    maxFeePerGas,
    reservedWei,
    prepaid: {
      ...mainnetPricing,
      maxChargeMicro: deployChargeMicroUsd(reservedWei, mainnetPricing),
    },
  };
}

/** What `costWei` of deploy gas is charged: the paymaster's gas charge (ceil, markup included). */
export function deployChargeMicroUsd(
  costWei: bigint,
  { ethUsdAnswer, markupBps }: { ethUsdAnswer: bigint; markupBps: number },
): bigint {
  return gasChargeMicroUsd({ actualGasCostWei: costWei, ethUsdAnswer, markupBps });
}
