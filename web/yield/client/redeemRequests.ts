import type { Address } from 'viem';
import type { YieldSiteClientVault } from '../clientData';
import { formatAmount } from './amounts';
import { formatTimeLeft } from '../../timeLeft';
import { vaultCalls } from './vaultCalls';
import { vaultElements } from './vaultCard';

/** One of the visitor's open withdrawal requests (ERC-7540): what it pays and when it is claimable. */
export interface RedeemRequest {
  id: bigint;
  shares: bigint;
  assets: bigint;
  /** Chain time in seconds; 0 once claimable. */
  claimableAt: number;
}

/** What the page last read of a vault for the visitor: their shares, position, open requests and the chain's clock. */
export interface VaultReading {
  shares: bigint;
  position: bigint;
  requests: RedeemRequest[];
  chainNow: number;
  /** `Date.now()` when the chain's clock was read. */
  readAt: number;
}

/** The account's open requests on the vault, the soonest claimable first. */
export async function openRequests(vault: Address, account: Address): Promise<RedeemRequest[]> {
  const ids = await vaultCalls.read(vault, 'openRedeemRequests', [account]);
  const requests = await Promise.all(
    ids.map(async (id) => {
      const [, shares, assets, claimableAt] = await vaultCalls.read(vault, 'redeemRequest', [id]);
      return { id, shares, assets, claimableAt: Number(claimableAt) };
    }),
  );
  return requests.sort((a, b) => a.claimableAt - b.claimableAt);
}

/** Seconds until the request is claimable (0 once it is), by the chain's clock as last read plus time since. */
function secondsLeft(reading: VaultReading, pending: RedeemRequest): number {
  if (pending.claimableAt === 0) return 0;
  const now = reading.chainNow + (Date.now() - reading.readAt) / 1000;
  return Math.max(0, pending.claimableAt - now);
}

function requestItem(vault: YieldSiteClientVault, pending: RedeemRequest, left: number): HTMLLIElement {
  const item = document.createElement('li');
  item.setAttribute('data-request', pending.id.toString());
  const amount = document.createElement('span');
  amount.textContent = `${formatAmount(pending.assets, vault.decimals, 6)} ${vault.symbol}`;
  const status = document.createElement('span');
  status.className = left > 0 ? 'pending' : 'claimable';
  status.setAttribute('data-status', left > 0 ? 'pending' : 'claimable');
  status.textContent = left > 0 ? `Claimable in ${formatTimeLeft(left, 'second')}` : 'Ready to claim';
  item.append(amount, status);
  return item;
}

/** Lists the requests with their time left, and offers to claim what is claimable. */
export function renderRequests(vault: YieldSiteClientVault, reading: VaultReading | undefined): void {
  const elements = vaultElements(vault);
  const requests = reading?.requests ?? [];
  elements.requests.hidden = requests.length === 0;
  elements.requestList.textContent = '';
  let claimable = 0n;
  for (const pending of requests) {
    const left = secondsLeft(reading!, pending);
    elements.requestList.append(requestItem(vault, pending, left));
    if (left === 0) claimable += pending.assets;
  }
  elements.claim.hidden = claimable === 0n;
  elements.claim.textContent = `Claim ${formatAmount(claimable, vault.decimals, 6)} ${vault.symbol}`;
}
