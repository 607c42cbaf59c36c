import type { Address, PublicClient } from 'viem';
import { YieldVault } from '../contracts/artifacts';
import type { NetworkRegistry } from '../chain/networkRegistry';
import type { PublicClients } from '../chain/publicClients';
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

export interface VaultFigures {
  totalAssets: string;
  stakedRate: string;
}

/** A vault's figures on a chain, or null when the chain does not answer. */
export type ReadVaultFigures = (
  chainId: number,
  vault: Address,
  decimals: number,
) => Promise<VaultFigures | null>;

/**
 * Reads vault figures from the chain, sharing one read per vault among the requests of `ttlMs` (a site
 * under load would otherwise make three RPC calls per page view; figures a block old are what a
 * visitor sees anyway until their wallet refreshes them).
 */
export function createVaultFigureReader({
  publicClients,
  ttlMs = 1_000,
  now = () => Date.now(),
}: {
  publicClients: PublicClients;
  ttlMs?: number;
  now?: () => number;
}): ReadVaultFigures {
  const cache = new Map<string, { expiresAt: number; figures: Promise<VaultFigures | null> }>();
  return (chainId, vault, decimals) => {
    const key = `${chainId}:${vault.toLowerCase()}`;
    const cached = cache.get(key);
    if (cached && cached.expiresAt > now()) return cached.figures;
    const client = publicClients.forChain(chainId);
    const figures = client ? readVaultFigures(client, vault, decimals) : Promise.resolve(null);
    cache.set(key, { expiresAt: now() + ttlMs, figures });
    // Bounded: an entry per vault ever served, pruned of expired ones when it grows.
    if (cache.size > 10_000) {
      for (const [entry, value] of cache) if (value.expiresAt <= now()) cache.delete(entry);
    }
    return figures;
  };
}

/** The site's view: the brand, and each vault's figures as `readFigures` gives them. */
export async function buildYieldSiteView({
  deployment,
  contractSet,
  networks,
  readFigures,
}: {
  deployment: YieldDeploymentRow;
  contractSet: YieldContractSetRow;
  networks: NetworkRegistry;
  readFigures: ReadVaultFigures;
}): Promise<YieldSiteView> {
  const network = networks.byChainId(deployment.chain_id);
  const vaults = await Promise.all(
    contractSet.vaults.map(async (vault): Promise<YieldSiteVault> => {
      const decimals = network?.tokens.find((token) => token.symbol === vault.symbol)?.decimals ?? 18;
      const onChain = await readFigures(deployment.chain_id, vault.address as Address, decimals);
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
): Promise<VaultFigures | null> {
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
