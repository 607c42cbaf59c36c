import type { Address } from 'viem';
import type { YieldSiteClientVault } from '../clientData';
import { formatAmount } from './amounts';
import { openRequests, renderRequests, type VaultReading } from './redeemRequests';
import { ERC7540_REDEEM_INTERFACE } from './vaultAbi';
import { vaultCalls } from './vaultCalls';
import { vaultElements } from './vaultCard';
import { account, chainTime } from './wallet';

/** Per vault, what the page last read for the connected visitor. */
export const readings = new Map<Address, VaultReading>();

/** Whether the vault redeems asynchronously (ERC-7540 through ERC-165, while sUSDe has a cooldown). */
async function redeemsAsynchronously(vault: Address): Promise<boolean> {
  try {
    return await vaultCalls.read(vault, 'supportsInterface', [ERC7540_REDEEM_INTERFACE]);
  } catch {
    return false; // A vault without ERC-165 is a plain ERC-4626.
  }
}

/** Reads the vault's total and, once connected, the visitor's position and requests, and shows them. */
export async function refresh(vault: YieldSiteClientVault): Promise<void> {
  const elements = vaultElements(vault);
  const total = await vaultCalls.read(vault.address, 'totalAssets', []);
  elements.total.textContent = `${formatAmount(total, vault.decimals, 2)} ${vault.symbol}`;
  if (!account) return;
  const owner = account;
  const asynchronous = await redeemsAsynchronously(vault.address);
  elements.withdraw.hidden = asynchronous;
  elements.request.hidden = !asynchronous;
  const shares = await vaultCalls.read(vault.address, 'balanceOf', [owner]);
  const [requests, chainNow, position] = await Promise.all([
    openRequests(vault.address, owner),
    chainTime(),
    // While redemption is asynchronous nothing is withdrawable before a request: show what the shares are worth.
    asynchronous
      ? vaultCalls.read(vault.address, 'convertToAssets', [shares])
      : vaultCalls.read(vault.address, 'maxWithdraw', [owner]),
  ]);
  const reading = { shares, position, requests, chainNow, readAt: Date.now() };
  readings.set(vault.address, reading);
  elements.position.textContent = `${formatAmount(position, vault.decimals, 6)} ${vault.symbol}`;
  elements.position.setAttribute('data-units', position.toString());
  renderRequests(vault, reading);
}
