import { gasChargeMicroUsd } from '../money/gasPricing';
import type { ChainFeeLevel } from '../chain/operationBounds';
import type { DeployChargeTerms } from '../db/yieldDeployCharges';

/** A deploy's charge terms (DeployChargeTerms: the type lives with the charges table, db/yieldDeployCharges.ts). */
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
