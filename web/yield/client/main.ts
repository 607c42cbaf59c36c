/**
 * The yield site's script, bundled by dashboard/buildPageScripts.ts and inlined by renderYieldSite.ts
 * under the page's CSP nonce: connect the visitor's EIP-1193 wallet (window.ethereum), show their
 * position, and deposit or withdraw by asking the wallet to send the ERC-20 approve and ERC-4626
 * deposit/withdraw. A vault whose redemption is asynchronous (ERC-7540, while sUSDe has a cooldown; it
 * says so through ERC-165) takes a withdrawal request instead, lists the visitor's open requests with the
 * time left until each is claimable, and offers a claim once any is.
 */
import { SITE_DATA_ELEMENT_ID, type YieldSiteClientData } from '../clientData';
import { renderRequests } from './redeemRequests';
import { errorText } from './vaultCard';
import { bindVault } from './vaultForms';
import { readings, refresh } from './vaultReadings';
import { account, connectAccount, provider } from './wallet';

/** The pending requests' countdown ticks every second; the chain is read again every REFRESH_MS. */
const REFRESH_MS = 15000;

const data = JSON.parse(document.getElementById(SITE_DATA_ELEMENT_ID)!.textContent!) as YieldSiteClientData;
const connectButton = document.getElementById('connect') as HTMLButtonElement;
const walletStatus = document.getElementById('wallet-status')!;

/** Counts the open requests down every second and reads the chain again now and then. */
function keepRequestsCurrent(): void {
  let ticks = 0;
  setInterval(() => {
    ticks += 1;
    if (!account) return;
    for (const vault of data.vaults) {
      if ((ticks * 1000) % REFRESH_MS === 0) refresh(vault).catch(() => {});
      else if (readings.has(vault.address)) renderRequests(vault, readings.get(vault.address));
    }
  }, 1000);
}

async function connect(): Promise<void> {
  try {
    const connected = await connectAccount(data.chainId);
    walletStatus.textContent = `Connected: ${connected}`;
    connectButton.hidden = true;
    await Promise.all(data.vaults.map(refresh));
  } catch (error) {
    walletStatus.textContent = `Could not connect: ${errorText(error)}`;
  }
}

for (const vault of data.vaults) bindVault(vault, data.chainId);
keepRequestsCurrent();
if (!provider) {
  connectButton.disabled = true;
  walletStatus.textContent =
    'No wallet found: open this page in a browser with an Ethereum wallet to deposit or withdraw.';
} else {
  connectButton.addEventListener('click', () => void connect());
}
