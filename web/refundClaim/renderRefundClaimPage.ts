import { join } from 'node:path';
import { networkByChainId } from '../../config/networks';
import { html, jsonForScriptElement, trustedHtml, type SafeHtml } from '../html';
import { readPageScript } from '../pageScript';
import { publicPageHead, readPublicPageStylesheets } from '../publicPageHead';
import { formatUsd } from '../checkout/formatAmount';
import { REFUND_CLAIM_DATA_ELEMENT_ID, type RefundClaimClientData } from './clientData';

/**
 * The refund claim page `/refund/<token>` (issue 41): the payer sees what the merchant refunds, picks one of
 * the chains it may be paid on, enters an address, confirms it is theirs there, and submits once (the
 * script, web/refundClaim/client/, posts to `/v1/refund-claims/{token}`). The checkout page's look and its
 * CSP: everything inline under the response's nonce, no external request. The address field starts empty:
 * the deposit's sender may be an exchange, not the payer.
 */

export interface RefundClaimView {
  amount: string;
  token: string;
  merchantName: string | null;
  status: string;
  chains: { chainId: number; network: string }[];
  chainId: number | null;
  address: string | null;
}

// The checkout page's stylesheet (one look for the pages a payer sees), then this page's form controls.
const css = readPublicPageStylesheets('refund claim', join('refundClaim', 'refundClaim.css'));
const claimScript = readPageScript('refundClaim.js');

const networkName = (chainId: number, fallback: string) => networkByChainId(chainId)?.displayName ?? fallback;

const head = (title: string, nonce: string): SafeHtml => publicPageHead(title, nonce, css);

/** The chain, the address and the confirmation, sent once by the page's script; hidden once an address is in. */
function claimForm(view: RefundClaimView, waiting: boolean): SafeHtml {
  return html`<section
    class="card pay"
    data-claim-form
    ${!waiting && trustedHtml('hidden')}
    aria-label="Where to send the refund"
  >
    <label class="field">
      <span class="field-label">Network</span>
      <select name="chainId" class="control" data-testid="claim-chain">
        ${view.chains.map(
          (chain) =>
            html`<option value="${chain.chainId}">${networkName(chain.chainId, chain.network)}</option>`,
        )}
      </select>
    </label>
    <label class="field">
      <span class="field-label">Your ${view.token} address on that network</span>
      <input
        name="address"
        class="control"
        data-testid="claim-address"
        autocomplete="off"
        autocapitalize="off"
        spellcheck="false"
        placeholder="0x…"
      />
    </label>
    <label class="confirm">
      <input type="checkbox" name="confirm" data-testid="claim-confirm" />
      <span
        >This address is mine and can receive ${view.token} on the network above. It cannot be changed once
        sent.</span
      >
    </label>
    <p class="claim-error" role="alert" data-claim-error data-testid="claim-error" hidden></p>
    <button type="button" class="submit" data-claim-submit data-testid="claim-submit">Send my address</button>
  </section>`;
}

/** The address received, and what happens next (or that the refund was sent). */
function receivedSection(view: RefundClaimView, merchant: string, received: boolean): SafeHtml {
  const network = view.chainId === null ? '' : networkName(view.chainId, '');
  return html`<section
    class="card state state-success"
    data-claim-received
    ${!received && trustedHtml('hidden')}
    data-testid="claim-received"
  >
    <h2>${view.status === 'succeeded' ? 'Refund sent' : 'Address received'}</h2>
    <p>
      ${view.status === 'succeeded' ? 'The refund was sent' : `${merchant} will send the refund`} to
      <span class="reference" data-claim-address>${view.address ?? ''}</span> on
      <span data-claim-network>${network}</span>.
    </p>
    ${
      view.status !== 'succeeded' &&
      html`<ul class="next-steps" aria-label="What happens next">
        <li>
          ${merchant} approves the refund, then it is sent to this address: nothing more to do on your side.
        </li>
        <li>
          It arrives as ${view.token} once the transaction is confirmed, in the wallet that holds this
          address.
        </li>
        <li>
          The address can no longer be changed. If the refund has not arrived in a few days, contact
          ${merchant}.
        </li>
      </ul>`
    }
  </section>`;
}

export function renderRefundClaimPage({
  view,
  claimUrl,
  nonce,
}: {
  view: RefundClaimView;
  claimUrl: string;
  nonce: string;
}): string {
  const merchant = view.merchantName ?? 'The merchant';
  const waiting = view.status === 'awaiting_address';
  const received = view.chainId !== null && view.address !== null;
  const network = view.chainId === null ? '' : networkName(view.chainId, '');
  const clientData: RefundClaimClientData = {
    claimUrl,
    token: view.token,
    networks: Object.fromEntries(
      view.chains.map((chain) => [chain.chainId, networkName(chain.chainId, chain.network)]),
    ),
  };
  return html`<!doctype html>
    <html lang="en">
      ${head(`Refund from ${view.merchantName ?? 'a merchant'} · ${formatUsd(view.amount)}`, nonce)}
      <body data-status="${view.status}">
        <main class="checkout">
          <header class="merchant">
            <div class="merchant-text">
              <p class="eyebrow">Refund from</p>
              <h1 class="merchant-name" data-testid="merchant-name">${merchant}</h1>
            </div>
          </header>
          <section class="card summary" aria-label="Refund">
            <p class="total-label">You get back</p>
            <p class="total-amount" data-testid="refund-amount">${formatUsd(view.amount)}</p>
            <p class="hint" data-claim-hint>
              ${received ? `Paid in ${view.token} on ${network}.` : `Paid in ${view.token}, on the network you choose below.`}
            </p>
          </section>
          ${claimForm(view, waiting)} ${receivedSection(view, merchant, received)}
          ${
            !waiting &&
            !received &&
            html`<section class="card state state-muted" data-testid="claim-closed">
              <h2>This refund no longer takes an address</h2>
              <p>Contact ${merchant} if you expected one.</p>
            </section>`
          }
        </main>
        <script type="application/json" id="${REFUND_CLAIM_DATA_ELEMENT_ID}">
          ${jsonForScriptElement(clientData)}
        </script>
        <script nonce="${nonce}">
          ${trustedHtml(claimScript)};
        </script>
      </body>
    </html> `.markup;
}

/** The page for a link that is unknown (404) or expired (410): no script, nothing to submit. */
export function renderRefundClaimEndPage({ expired, nonce }: { expired: boolean; nonce: string }): string {
  const title = expired ? 'This refund link has expired' : 'Refund link not found';
  const text = expired
    ? 'Ask the merchant for a new refund link.'
    : 'This refund link does not exist. Check the link you were given, or ask the merchant for a new one.';
  return html`<!doctype html>
    <html lang="en">
      ${head(title, nonce)}
      <body data-status="expired">
        <main class="checkout">
          <section class="card state state-muted">
            <h1>${title}</h1>
            <p>${text}</p>
          </section>
        </main>
      </body>
    </html> `.markup;
}
