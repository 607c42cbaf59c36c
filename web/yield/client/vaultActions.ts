import type { Address } from 'viem';
import type { YieldSiteClientVault } from '../clientData';
import { formatAmount } from './amounts';
import { assetCalls, vaultCalls } from './vaultCalls';
import { say, vaultElements } from './vaultCard';
import { readings } from './vaultReadings';
import { ensureChain } from './wallet';

/** What the visitor asks of a vault with an amount, from the connected account on the site's chain. */
export type VaultAction = (
  vault: YieldSiteClientVault,
  amount: bigint,
  owner: Address,
  chainId: number,
) => Promise<void>;

const amountText = (vault: YieldSiteClientVault, amount: bigint) =>
  `${formatAmount(amount, vault.decimals, 6)} ${vault.symbol}`;

/** ERC-20 approve (when the allowance is short), then ERC-4626 deposit. */
export const deposit: VaultAction = async (vault, amount, owner, chainId) => {
  const elements = vaultElements(vault);
  await ensureChain(chainId);
  const allowance = await assetCalls.read(vault.asset, 'allowance', [owner, vault.address]);
  if (allowance < amount) {
    say(elements, `Approve ${vault.symbol} in your wallet…`);
    await assetCalls.write(vault.asset, 'approve', [vault.address, amount]);
  }
  say(elements, 'Confirm the deposit in your wallet…');
  await vaultCalls.write(vault.address, 'deposit', [amount, owner]);
  say(elements, `Deposited ${amountText(vault, amount)}.`);
};

export const withdraw: VaultAction = async (vault, amount, owner, chainId) => {
  const elements = vaultElements(vault);
  await ensureChain(chainId);
  say(elements, 'Confirm the withdrawal in your wallet…');
  await vaultCalls.write(vault.address, 'withdraw', [amount, owner, owner]);
  say(elements, `Withdrew ${amountText(vault, amount)}.`);
};

/** Burns the shares worth `amount` (all of them when `amount` is the whole position) and starts their cooldown. */
export const requestWithdrawal: VaultAction = async (vault, amount, owner, chainId) => {
  const elements = vaultElements(vault);
  const current = readings.get(vault.address);
  await ensureChain(chainId);
  const shares =
    current && amount >= current.position
      ? current.shares
      : await vaultCalls.read(vault.address, 'convertToShares', [amount]);
  if (shares === 0n) throw new Error('That amount is smaller than one vault share.');
  say(elements, 'Confirm the withdrawal request in your wallet…');
  await vaultCalls.write(vault.address, 'requestRedeem', [shares, owner, owner]);
  say(elements, `Requested ${amountText(vault, amount)}: claim it here once the cooldown ends.`);
};

/** Redeems every claimable request (ERC-7540 redeem of maxRedeem shares). */
export async function claim(vault: YieldSiteClientVault, owner: Address, chainId: number): Promise<void> {
  const elements = vaultElements(vault);
  await ensureChain(chainId);
  const shares = await vaultCalls.read(vault.address, 'maxRedeem', [owner]);
  if (shares === 0n) throw new Error('Nothing is claimable yet.');
  say(elements, 'Confirm the claim in your wallet…');
  const before = await assetCalls.read(vault.asset, 'balanceOf', [owner]);
  await vaultCalls.write(vault.address, 'redeem', [shares, owner, owner]);
  const after = await assetCalls.read(vault.asset, 'balanceOf', [owner]);
  say(elements, `Claimed ${amountText(vault, after - before)}.`);
}
