import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { html, jsonForScriptElement, trustedHtml, type SafeHtml } from '../html';
import { readPageScript } from '../pageScript';
import { SITE_DATA_ELEMENT_ID, type YieldSiteClientData } from './clientData';
import type { YieldSiteVault, YieldSiteView } from '../../yield/siteView';
import { formatAmount } from './client/amounts';

/**
 * A yield deployment's branded site (docs/yield.md): the brand, each vault with its asset, total assets
 * and the sUSDe rate it earns, and deposit and withdraw forms that act through the visitor's EIP-1193
 * wallet (`window.ethereum`) through its script (client/, bundled into web/dist/yieldSite.js). While a vault redeems asynchronously (ERC-7540, sUSDe's cooldown on) the
 * script swaps the withdraw form for a withdrawal request and lists the visitor's requests with the time
 * left and a claim button. A sunset deployment offers withdraw only. Everything is inline under the
 * CSP nonce: no external request, so the merchant's logo URL is not loaded and the brand shows as a
 * monogram in its colours (docs/decisions.md).
 */

const readAsset = (name: string, closingTag: RegExp): string => {
  const text = readFileSync(join(__dirname, name), 'utf8');
  if (closingTag.test(text)) throw new Error(`web/yield/${name} must not contain ${closingTag}`);
  return text;
};
const siteCss = readAsset('yieldSite.css', /<\/style/i);
const siteScript = readPageScript('yieldSite.js');

/** Rounds a base-unit amount down to `places` decimals for display ("1,234.56"), as the site's script does. */
const displayAmount = (baseUnits: string, decimals: number, places = 2): string =>
  formatAmount(BigInt(baseUnits), decimals, places);

/** One vault's card: its figures, the deposit form (not once sunset), the withdraw form, and the withdrawal
 *  request form and request list the script shows instead while the vault redeems asynchronously. */
function renderVault(vault: YieldSiteVault, sunset: boolean): SafeHtml {
  return html`<article class="vault" data-vault="${vault.address}">
    <header>
      <h2>${vault.symbol}</h2>
      <span class="share">${vault.name} · ${vault.shareSymbol}</span>
    </header>
    <dl class="figures">
      <div>
        <dt>Total deposits</dt>
        <dd data-total-assets>
          ${vault.totalAssets === null ? 'unavailable' : `${displayAmount(vault.totalAssets, vault.decimals)} ${vault.symbol}`}
        </dd>
      </div>
      <div>
        <dt>Rate</dt>
        <dd data-rate>
          ${vault.stakedRate === null ? 'unavailable' : `1 sUSDe = ${displayAmount(vault.stakedRate, vault.decimals, 6)} ${vault.symbol}`}
        </dd>
      </div>
      <div>
        <dt>Your deposit</dt>
        <dd data-position>Connect a wallet</dd>
      </div>
    </dl>
    ${
      !sunset &&
      html`<form class="action" data-action="deposit">
        <label
          >Deposit ${vault.symbol}<input
            name="amount"
            inputmode="decimal"
            autocomplete="off"
            placeholder="0.00"
            required
        /></label>
        <button type="submit" class="primary">Deposit</button>
      </form>`
    }
    <form class="action" data-action="withdraw">
      <label
        >Withdraw ${vault.symbol}<input
          name="amount"
          inputmode="decimal"
          autocomplete="off"
          placeholder="0.00"
          required
      /></label>
      <button type="button" class="link" data-max>Max</button>
      <button type="submit" class="secondary">Withdraw</button>
    </form>
    <form class="action" data-action="request" hidden>
      <label
        >Request withdrawal of ${vault.symbol}<input
          name="amount"
          inputmode="decimal"
          autocomplete="off"
          placeholder="0.00"
          required
      /></label>
      <button type="button" class="link" data-max>Max</button>
      <button type="submit" class="secondary">Request withdrawal</button>
    </form>
    <section class="requests" data-requests hidden>
      <h3>Withdrawal requests</h3>
      <p class="muted">sUSDe pays out after its cooldown: each request is claimable once its time is up.</p>
      <ul data-request-list></ul>
      <button type="button" class="primary" data-claim hidden>Claim</button>
    </section>
    <p class="message" data-message aria-live="polite"></p>
    <p class="address">Vault <code>${vault.address}</code></p>
  </article>`;
}

export function renderYieldSite({ view, nonce }: { view: YieldSiteView; nonce: string }): string {
  const monogram = view.title.trim().charAt(0).toUpperCase() || 'Y';
  // Colours are validated #rrggbb at the API: safe inside the nonce'd style element.
  const brandCss = `:root{--brand:${view.primaryColor};--accent:${view.accentColor}}`;
  const data: YieldSiteClientData = {
    chainId: view.chainId,
    sunset: view.sunset,
    vaults: view.vaults.map(({ address, asset, symbol, decimals, shareSymbol }) => ({
      address,
      asset,
      symbol,
      decimals,
      shareSymbol,
    })),
  };
  const page = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <link rel="icon" href="data:," />
        <title>${view.title}</title>
        <style nonce="${nonce}">
          ${trustedHtml(siteCss)}${trustedHtml(brandCss)}
        </style>
      </head>
      <body>
        <main class="site">
          <header class="brand">
            <span class="monogram" aria-hidden="true">${monogram}</span>
            <div>
              <h1 data-testid="brand">${view.title}</h1>
              <p class="tagline">Earn the sUSDe rate on your stablecoins · ${view.networkName}</p>
            </div>
          </header>
          ${
            view.sunset &&
            html`<p class="notice" data-testid="sunset-notice">
              This product is closing: deposits are off, and your funds stay yours to take out below. While
              sUSDe's withdrawal cooldown is on, you request the withdrawal and claim it once the cooldown
              ends (the time left shows under your request); without it, a withdrawal pays at once.
            </p>`
          }
          <section class="wallet">
            <button type="button" id="connect" class="primary">Connect wallet</button>
            <p id="wallet-status" class="muted" aria-live="polite">Not connected</p>
          </section>
          <section class="vaults" data-testid="vaults">
            ${view.vaults.map((vault) => renderVault(vault, view.sunset))}
          </section>
          <footer class="muted">
            Deposits are staked as sUSDe by an ERC-4626 vault; their value follows the sUSDe rate.
          </footer>
        </main>
        <script type="application/json" id="${SITE_DATA_ELEMENT_ID}">
          ${jsonForScriptElement(data)}
        </script>
        <script nonce="${nonce}">
          ${trustedHtml(siteScript)};
        </script>
      </body>
    </html>`;
  return page.markup;
}

/** The 404 page of a host or preview id with no active or sunset deployment. */
export function renderYieldSiteNotFound({ nonce }: { nonce: string }): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <link rel="icon" href="data:," />
        <title>Not found</title>
        <style nonce="${nonce}">
          ${trustedHtml(siteCss)}
        </style>
      </head>
      <body>
        <main class="site">
          <h1>Nothing here</h1>
          <p class="muted">This site does not exist or is no longer available.</p>
        </main>
      </body>
    </html>`.markup;
}
