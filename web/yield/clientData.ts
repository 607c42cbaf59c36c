import type { Address } from 'viem';

/** What renderYieldSite.ts hands the site's script in its `site-data` JSON block. */
export interface YieldSiteClientData {
  chainId: number;
  sunset: boolean;
  vaults: YieldSiteClientVault[];
}

export interface YieldSiteClientVault {
  address: Address;
  /** The ERC-20 the vault takes and pays out. */
  asset: Address;
  symbol: string;
  decimals: number;
  shareSymbol: string;
}

export const SITE_DATA_ELEMENT_ID = 'site-data';
