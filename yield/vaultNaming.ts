import type { YieldBranding } from '../db/schema';

/**
 * The on-chain name and share symbol of a deployment's vault for one token: the merchant's brand
 * (display name, else the deployment name) in both, e.g. "Acme Savings USDe Vault" and "ACMEUSDe".
 */
export function vaultNaming(
  { name, branding }: { name: string; branding: YieldBranding },
  tokenSymbol: string,
): { name: string; shareSymbol: string } {
  const brand = (branding.displayName ?? name).trim();
  const ticker =
    brand
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, 4)
      .toUpperCase() || 'Y';
  return { name: `${brand} ${tokenSymbol} Vault`, shareSymbol: `${ticker}${tokenSymbol}` };
}
