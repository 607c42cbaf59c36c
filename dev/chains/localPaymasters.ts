import { type Address, parseEther } from 'viem';
import type { PaymasterFunding } from '../../chain/deployment/paymasterDeployment';
import { STABLECOINS } from '../../chain/stablecoins';

/**
 * Local chains: 100 ETH of deposit (topped up when under 10), and a 1 ETH stake with a one-day
 * unstake delay, above Alto's defaults (`--min-entity-stake 1`, `--min-entity-unstake-delay 1`).
 */
export const LOCAL_PAYMASTER_FUNDING: PaymasterFunding = {
  minimumDeposit: parseEther('10'),
  targetDeposit: parseEther('100'),
  stake: parseEther('1'),
  unstakeDelaySec: 86_400,
};

/** Local chains price ether at 3,000 USD, so a USD stablecoin is worth 3,000 whole tokens per ether. */
const LOCAL_USD_PER_ETHER = 3_000n;

/**
 * The signer's ERC-20 whitelist for local chains (the SIGNER_ERC20_TOKENS shape): every local
 * stablecoin at 3,000 whole tokens per ether, i.e. 3000 × 10^decimals base units per 1e18 wei.
 */
export function localErc20GasTokenRates(
  chains: { chainId: number; contracts: Record<string, Address> }[],
): Record<string, Record<string, string>> {
  return Object.fromEntries(
    chains.map(({ chainId, contracts }) => [
      String(chainId),
      Object.fromEntries(
        STABLECOINS.flatMap(({ contractKey, decimals }) =>
          contracts[contractKey]
            ? [[contracts[contractKey], String(LOCAL_USD_PER_ETHER * 10n ** BigInt(decimals))]]
            : [],
        ),
      ),
    ]),
  );
}
