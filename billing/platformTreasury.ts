import { getAddress, type Address } from 'viem';
import { ConfigError, type Config } from '../config';
import { NETWORKS, type KnownChainId } from '../config/networks';

/**
 * Where prepaid gas top-ups settle: the platform's own treasury, never the merchant's payout address
 * (a top-up paid back to the merchant would be credit for free). `PLATFORM_TREASURY_ADDRESS_<chainId>`
 * names it per chain (for a layer-2 it receives the sUSDe on the settlement chain), else
 * `PLATFORM_TREASURY_ADDRESS`. Production must configure one for every mainnet; elsewhere an unset
 * treasury is anvil's public dev account 4, which exists only on local chains.
 */
export const DEVELOPMENT_TREASURY_ADDRESS: Address = '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65';

export type TreasuryConfig = Pick<Config, 'NODE_ENV' | 'PLATFORM_TREASURY_ADDRESS'> &
  Partial<Record<`PLATFORM_TREASURY_ADDRESS_${KnownChainId}`, string>>;

/** The configured treasury of `chainId`, or undefined when neither variable names one. */
function configuredTreasury(config: TreasuryConfig, chainId: number): string | undefined {
  return (
    (config as Record<string, string | undefined>)[`PLATFORM_TREASURY_ADDRESS_${chainId}`] ??
    config.PLATFORM_TREASURY_ADDRESS
  );
}

/** The treasury top-ups on `chainId` settle to. */
export function platformTreasuryFor(config: TreasuryConfig, chainId: number): Address {
  const configured = configuredTreasury(config, chainId);
  if (configured) return getAddress(configured);
  if (config.NODE_ENV === 'production') throw missingTreasury([chainId]);
  return DEVELOPMENT_TREASURY_ADDRESS;
}

/** Production refuses to start without a treasury for every mainnet (top-ups are live-only). */
export function assertTreasuryConfigured(config: TreasuryConfig): void {
  if (config.NODE_ENV !== 'production') return;
  const missing = NETWORKS.filter(
    (network) => !network.testnet && !configuredTreasury(config, network.chainId),
  );
  if (missing.length) throw missingTreasury(missing.map((network) => network.chainId));
}

function missingTreasury(chainIds: number[]): ConfigError {
  return new ConfigError([
    {
      variable: 'PLATFORM_TREASURY_ADDRESS',
      problem: `is required in production (or PLATFORM_TREASURY_ADDRESS_<chainId> for chain ${chainIds.join(', ')}): top-ups settle there`,
    },
  ]);
}
