import type { Address, PublicClient } from 'viem';
import { YieldVault } from '../contracts/artifacts';
import type { NetworkRegistry } from '../chain/networkRegistry';
import type { YieldContractSetRow, YieldDeploymentRow } from '../db/yieldDeployments';

/** What a yield deployment's site shows: the brand, and per vault its asset, total assets and the rate it earns. */
export interface YieldSiteView {
  id: string;
  title: string;
  networkName: string;
  chainId: number;
  sunset: boolean;
  primaryColor: string;
  accentColor: string;
  vaults: YieldSiteVault[];
}

export interface YieldSiteVault {
  address: Address;
  name: string;
  shareSymbol: string;
  symbol: string;
  asset: Address;
  decimals: number;
  /** Base units of the asset the vault holds (through sUSDe); null when the chain did not answer. */
  totalAssets: string | null;
  /** Assets one whole sUSDe redeems for, in base units (the rate the vault earns); null likewise. */
  stakedRate: string | null;
}

const DEFAULT_PRIMARY = '#1d4ed8';
const DEFAULT_ACCENT = '#0f766e';

/** Reads each vault's total assets and its sUSDe rate from the chain. */
export async function buildYieldSiteView({
  deployment,
  contractSet,
  networks,
  client,
}: {
  deployment: YieldDeploymentRow;
  contractSet: YieldContractSetRow;
  networks: NetworkRegistry;
  client: PublicClient | undefined;
}): Promise<YieldSiteView> {
  const network = networks.byChainId(deployment.chain_id);
  const vaults = await Promise.all(
    contractSet.vaults.map(async (vault): Promise<YieldSiteVault> => {
      const decimals = network?.tokens.find((token) => token.symbol === vault.symbol)?.decimals ?? 18;
      const onChain = client ? await readVaultFigures(client, vault.address as Address, decimals) : null;
      return {
        address: vault.address as Address,
        name: vault.name,
        shareSymbol: vault.shareSymbol,
        symbol: vault.symbol,
        asset: vault.asset as Address,
        decimals,
        totalAssets: onChain?.totalAssets ?? null,
        stakedRate: onChain?.stakedRate ?? null,
      };
    }),
  );
  return {
    id: deployment.id,
    title: deployment.branding.displayName ?? deployment.name,
    networkName: network?.displayName ?? `Chain ${deployment.chain_id}`,
    chainId: deployment.chain_id,
    sunset: deployment.status === 'sunset',
    primaryColor: deployment.branding.primaryColor ?? DEFAULT_PRIMARY,
    accentColor: deployment.branding.accentColor ?? DEFAULT_ACCENT,
    vaults,
  };
}

async function readVaultFigures(
  client: PublicClient,
  vault: Address,
  decimals: number,
): Promise<{ totalAssets: string; stakedRate: string } | null> {
  try {
    const [totalAssets, stakedVault] = await Promise.all([
      client.readContract({ address: vault, abi: YieldVault.abi, functionName: 'totalAssets' }),
      client.readContract({ address: vault, abi: YieldVault.abi, functionName: 'stakedVault' }),
    ]);
    // sUSDe has the asset's decimals (OpenZeppelin ERC-4626 without offset): one whole share is 10^decimals.
    const stakedRate = await client.readContract({
      address: stakedVault,
      abi: YieldVault.abi,
      functionName: 'convertToAssets',
      args: [10n ** BigInt(decimals)],
    });
    return { totalAssets: totalAssets.toString(), stakedRate: stakedRate.toString() };
  } catch {
    // The page still serves (and deposits still work through the wallet) while our RPC is down.
    return null;
  }
}
