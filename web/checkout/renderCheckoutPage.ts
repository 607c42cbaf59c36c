import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { networkByChainId } from '../../config/networks';
import { STABLECOIN_SYMBOLS } from '../../chain/stablecoins';
import { html, jsonForScriptElement, trustedHtml, type SafeHtml } from '../html';
import { readPageScript } from '../pageScript';
import { CHECKOUT_DATA_ELEMENT_ID, type CheckoutClientData } from './clientData';
import { formatTokenAmount, formatUsd } from './formatAmount';
import { formatTimeRemaining } from '../timeLeft';
import { paymentQrSvg } from './paymentQrCode';

/**
 * The checkout page a payer opens from a session's `paymentUrl`: merchant, amount and line items,
 * a token × network chooser, and for each option the exact amount, the deposit address and a QR
 * code of its EIP-681 URI. The inline script (client/, bundled into web/dist/checkout.js) polls the session status view and redirects to
 * `successUrl` once the webhook was delivered. Everything is inline (CSP nonce): no external request.
 */

/** The public read of a session (`GET /v1/sessions/{id}`), as far as the page uses it. */
export interface CheckoutSession {
  id: string;
  status: string;
  amount: string;
  merchantName: string | null;
  sandboxMode: boolean;
  expiresAt: string;
  lineItems: { name: string; quantity: number; unitPrice: string; total: string }[];
  paymentOptions: CheckoutPaymentOption[];
  successUrl: string | null;
}

export interface CheckoutPaymentOption {
  chainId: number;
  network: string;
  symbol: string;
  tokenAddress: string;
  decimals: number;
  /** Base units, decimal string. */
  amount: string;
  depositAddress: string;
  paymentUri: string;
}

export interface RenderCheckoutPageParameters {
  session: CheckoutSession;
  webhookDelivered: boolean;
  /**
   * Decimal USD that arrived before an expired session's expiry ("0" or absent when nothing did): a
   * non-zero amount shows the underpaid state (the merchant's `session.underpaid`) instead of expired.
   */
  receivedAmount?: string;
  /**
   * What happens to money beyond the order (issue 41): `overpaidAmount` (decimal USD) when a paid session
   * received more than its amount; `lateAmount` when transfers reached an expired session after expiry.
   */
  outcome?: { overpaidAmount?: string; lateAmount?: string };
  now: Date;
  /** Per-response CSP nonce for the inline style and script. */
  nonce: string;
}

const readAsset = (name: string, closingTag: RegExp): string => {
  const text = readFileSync(join(__dirname, name), 'utf8');
  // Inlined verbatim: a closing tag inside would end the element early.
  if (closingTag.test(text)) throw new Error(`web/checkout/${name} must not contain ${closingTag}`);
  return text;
};
const checkoutCss = readAsset('checkout.css', /<\/style/i);
const checkoutScript = readPageScript('checkout.js');

/** Which status blocks show in which session status; the client script applies the same rule. */
const PAY_STATES = 'pending awaiting_payment';
/** A paid session's states (where an overpayment is told), and an unpaid one's ends (where a late payment is). */
const PAID_STATES = 'confirming bridging completed';
const ENDED_UNPAID_STATES = 'expired underpaid';

const STATUS_LABELS: Record<string, string> = {
  pending: 'Awaiting payment',
  awaiting_payment: 'Awaiting payment',
  confirming: 'Confirming',
  bridging: 'Settling',
  completed: 'Paid',
  failed: 'Failed',
  expired: 'Expired',
  underpaid: 'Underpaid',
};

/** What the page shows: the session's status, except an expired session that was partly paid reads as underpaid. */
const displayStatusOf = (status: string, receivedAmount: string | undefined) =>
  status === 'expired' && receivedAmount !== undefined && receivedAmount !== '0' ? 'underpaid' : status;

/** Drawn rather than typed: emoji and symbol glyphs depend on the payer's fonts. */
const icon = (path: string) =>
  trustedHtml(`<svg viewBox="0 0 24 24" width="26" height="26" fill="none" stroke="currentColor" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round">${path}</svg>`);
const icons = {
  check: icon('<path d="M5 12.5l4.5 4.5L19 7.5"/>'),
  alert: icon('<path d="M12 7v6"/><path d="M12 17h.01"/>'),
  clock: icon('<circle cx="12" cy="12" r="8.5"/><path d="M12 7.5V12l3 2"/>'),
};

export const optionKey = (option: Pick<CheckoutPaymentOption, 'symbol' | 'chainId'>) => `${option.symbol}:${option.chainId}`;

const networkName = (option: CheckoutPaymentOption) => networkByChainId(option.chainId)?.displayName ?? option.network;

export async function renderCheckoutPage({
  session,
  webhookDelivered,
  receivedAmount,
  outcome = {},
  now,
  nonce,
}: RenderCheckoutPageParameters): Promise<string> {
  const status = displayStatusOf(session.status, receivedAmount);
  const merchant = session.merchantName ?? 'the merchant';
  const qrCodes = await Promise.all(session.paymentOptions.map((option) => paymentQrSvg(option.paymentUri)));
  const options = session.paymentOptions.map((option, index) => ({ option, qrSvg: qrCodes[index]! }));
  const tokens = [...new Set(session.paymentOptions.map((option) => option.symbol))].sort(
    (a, b) => rank(STABLECOIN_SYMBOLS, a) - rank(STABLECOIN_SYMBOLS, b),
  );
  const chains = [...new Map(session.paymentOptions.map((option) => [option.chainId, networkName(option)])).entries()];
  const selected = session.paymentOptions.find((option) => option.symbol === tokens[0]);
  const shows = (states: string) => states.split(' ').includes(status);

  const clientData = clientDataOf(session, { status, webhookDelivered, now });

  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Pay ${session.merchantName ?? 'checkout'} · ${formatUsd(session.amount)}</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${trustedHtml(checkoutCss)}</style>
</head>
<body data-status="${status}">
${session.sandboxMode && html`<div class="sandbox-banner" role="note" data-testid="sandbox-badge"><strong>Test mode — testnets only</strong><span>No real funds move. Pay with testnet tokens.</span></div>`}
<main class="checkout">
  <header class="merchant">
    <div class="merchant-mark" aria-hidden="true">${initialOf(session.merchantName)}</div>
    <div class="merchant-text">
      <p class="eyebrow">Payment to</p>
      <h1 class="merchant-name" data-testid="merchant-name">${session.merchantName ?? 'Checkout'}</h1>
    </div>
    <span class="status-pill" data-status-label>${STATUS_LABELS[status] ?? status}</span>
  </header>

  <section class="card summary" aria-label="Order summary">
    <p class="total-label">Total</p>
    <p class="total-amount" data-testid="total-amount">${formatUsd(session.amount)}</p>
    ${session.lineItems.length > 0 && html`<ul class="line-items">${session.lineItems.map(lineItem)}</ul>`}
  </section>

  <section class="card state state-progress" data-show-when="confirming" ${!shows('confirming') && trustedHtml('hidden')} data-testid="state-confirming">
    <div class="state-icon spinner" aria-hidden="true"></div>
    <h2>Payment received — confirming</h2>
    <p>We have seen your transaction and are waiting for the network to confirm it. This usually takes under a minute; you can keep this page open.</p>
  </section>
  <section class="card state state-progress" data-show-when="bridging" ${!shows('bridging') && trustedHtml('hidden')} data-testid="state-bridging">
    <div class="state-icon spinner" aria-hidden="true"></div>
    <h2>Payment confirmed — settling</h2>
    <p>Your payment is confirmed and is being transferred across networks to ${merchant}. Nothing else is needed from you.</p>
  </section>
  <section class="card state state-success" data-show-when="completed" ${!shows('completed') && trustedHtml('hidden')} data-testid="state-completed">
    <div class="state-icon" aria-hidden="true">${icons.check}</div>
    <h2>Payment complete</h2>
    <p>Thank you. ${merchant} has received your payment.</p>
  </section>
  <section class="card state state-error" data-show-when="failed" ${!shows('failed') && trustedHtml('hidden')} data-testid="state-failed">
    <div class="state-icon" aria-hidden="true">${icons.alert}</div>
    <h2>Payment could not be completed</h2>
    <p>Something went wrong while processing your payment. Please contact ${merchant} and quote reference <span class="reference">${session.id}</span>.</p>
  </section>
  <section class="card state state-muted" data-show-when="expired" ${!shows('expired') && trustedHtml('hidden')} data-testid="state-expired">
    <div class="state-icon" aria-hidden="true">${icons.clock}</div>
    <h2>This payment request has expired</h2>
    <p>Do not send funds to its address. Ask ${merchant} for a new payment link.</p>
  </section>
  <section class="card state state-muted" data-show-when="underpaid" ${!shows('underpaid') && trustedHtml('hidden')} data-testid="state-underpaid">
    <div class="state-icon" aria-hidden="true">${icons.alert}</div>
    <h2>Payment incomplete — this request has expired</h2>
    <p>We received <strong data-testid="received-amount">${formatUsd(receivedAmount ?? '0')}</strong> of <strong>${formatUsd(session.amount)}</strong> before it expired. Your funds are not lost: they are held for ${merchant}, who can complete the order or refund you.</p>
    <p>Do not send more to this address. Contact ${merchant} and quote reference <span class="reference">${session.id}</span>.</p>
  </section>
  ${outcomeNotices(session, outcome, merchant, shows)}
  <p class="redirect-notice" data-redirect-notice hidden>Returning you to ${merchant}…</p>

  <section class="card pay" data-show-when="${PAY_STATES}" ${!shows(PAY_STATES) && trustedHtml('hidden')} aria-label="How to pay">
    ${
      options.length === 0
        ? html`<p class="empty">No payment option is available for this request. Please contact ${merchant}.</p>`
        : html`
    <fieldset class="chooser">
      <legend>Pay with</legend>
      <div class="segments">${tokens.map((symbol) => segment('token', symbol, symbol, symbol === selected?.symbol))}</div>
    </fieldset>
    <fieldset class="chooser">
      <legend>Network</legend>
      <div class="segments segments-network">${chains.map(([chainId, name]) => segment('network', String(chainId), name, chainId === selected?.chainId))}</div>
    </fieldset>
    ${options.map(({ option, qrSvg }) => optionPanel(option, qrSvg, option === selected))}
    <p class="hint">Amounts are exact: send the full amount in a single transfer.</p>
    <p class="countdown">Expires in <time data-countdown datetime="${session.expiresAt}">${formatTimeRemaining(Date.parse(session.expiresAt) - now.getTime())}</time></p>`
    }
  </section>

  <footer class="footer">
    <p>Reference <span class="reference">${session.id}</span></p>
  </footer>
</main>
<script type="application/json" id="${CHECKOUT_DATA_ELEMENT_ID}">${jsonForScriptElement(clientData)}</script>
<script nonce="${nonce}">${trustedHtml(checkoutScript)}</script>
</body>
</html>
`;
  return page.markup;
}

/**
 * What happens to money beyond the order (issue 41): the surplus of an overpaid session, shown while it is
 * paid; a payment that reached an expired session late, shown while it reads expired or underpaid.
 */
function outcomeNotices(
  session: CheckoutSession,
  outcome: NonNullable<RenderCheckoutPageParameters['outcome']>,
  merchant: string,
  shows: (states: string) => boolean,
): SafeHtml {
  return html`${
    outcome.overpaidAmount !== undefined &&
    html`<section class="card state state-muted" data-show-when="${PAID_STATES}" ${!shows(PAID_STATES) && trustedHtml('hidden')} data-testid="state-overpaid">
    <h2>You sent more than the amount due</h2>
    <p>We received <strong data-testid="overpaid-amount">${formatUsd(outcome.overpaidAmount)}</strong> more than the <strong>${formatUsd(session.amount)}</strong> due. The difference goes to ${merchant} with your payment; ${merchant} may refund it to you. Contact them and quote reference <span class="reference">${session.id}</span>.</p>
  </section>`
  }
  ${
    outcome.lateAmount !== undefined &&
    html`<section class="card state state-muted" data-show-when="${ENDED_UNPAID_STATES}" ${!shows(ENDED_UNPAID_STATES) && trustedHtml('hidden')} data-testid="state-paid-late">
    <h2>A payment arrived after this request expired</h2>
    <p>We received <strong data-testid="late-amount">${formatUsd(outcome.lateAmount)}</strong> after the request expired. It is held for ${merchant}, who can still complete your order or refund you. Do not send more; contact ${merchant} and quote reference <span class="reference">${session.id}</span>.</p>
  </section>`
  }`;
}

/** What the page's script starts from: the status as shown, where to poll, the server's clock. */
function clientDataOf(
  session: CheckoutSession,
  { status, webhookDelivered, now }: { status: string; webhookDelivered: boolean; now: Date },
): CheckoutClientData {
  return {
    sessionId: session.id,
    statusUrl: `/v1/sessions/${encodeURIComponent(session.id)}/status`,
    status,
    webhookDelivered,
    expiresAt: session.expiresAt,
    serverNow: now.toISOString(),
    successUrl: session.successUrl,
    statusLabels: STATUS_LABELS,
  };
}

function lineItem(item: CheckoutSession['lineItems'][number]): SafeHtml {
  return html`<li class="line-item">
      <span class="line-item-name">${item.name}</span>
      <span class="line-item-quantity">${item.quantity} × ${formatUsd(item.unitPrice)}</span>
      <span class="line-item-total">${formatUsd(item.total)}</span>
    </li>`;
}

function segment(name: string, value: string, label: string, checked: boolean): SafeHtml {
  return html`<label class="segment"><input type="radio" name="${name}" value="${value}" ${checked && trustedHtml('checked')}><span>${label}</span></label>`;
}

function optionPanel(option: CheckoutPaymentOption, qrSvg: string, visible: boolean): SafeHtml {
  const amount = formatTokenAmount(option.amount, option.decimals);
  const network = networkName(option);
  return html`<div class="option" data-option="${optionKey(option)}" data-symbol="${option.symbol}" data-chain-id="${option.chainId}" ${!visible && trustedHtml('hidden')}>
      <div class="field">
        <span class="field-label">Send exactly</span>
        <div class="field-row">
          <span class="option-amount" data-testid="option-amount">${amount} <span class="option-symbol">${option.symbol}</span></span>
          <button type="button" class="copy" data-copy="${amount}" aria-label="Copy amount">Copy</button>
        </div>
      </div>
      <div class="qr" role="img" aria-label="${`QR code: pay ${amount} ${option.symbol} on ${network}`}" data-testid="option-qr">${trustedHtml(qrSvg)}</div>
      <div class="field">
        <span class="field-label">To this address on <strong>${network}</strong></span>
        <div class="field-row">
          <code class="address" data-testid="option-address">${option.depositAddress}</code>
          <button type="button" class="copy" data-copy="${option.depositAddress}" aria-label="Copy address">Copy</button>
        </div>
      </div>
      <a class="wallet-button" href="${option.paymentUri}">Open in wallet</a>
      <p class="caution">Send only <strong>${option.symbol}</strong> on <strong>${network}</strong>. Funds sent with another token or on another network may be lost.</p>
      <p class="token-contract">${option.symbol} contract <code>${option.tokenAddress}</code></p>
    </div>`;
}

function initialOf(name: string | null): string {
  const first = name?.trim().codePointAt(0);
  return first === undefined ? '$' : String.fromCodePoint(first).toUpperCase();
}

function rank(order: readonly string[], value: string): number {
  const index = order.indexOf(value);
  return index === -1 ? order.length : index;
}

/** The page for an unknown or malformed payment link (served with status 404). */
export function renderCheckoutNotFoundPage({ nonce }: { nonce: string }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Payment link not found</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${trustedHtml(checkoutCss)}</style>
</head>
<body data-status="expired">
<main class="checkout">
  <section class="card state state-muted">
    <div class="state-icon" aria-hidden="true">${icons.alert}</div>
    <h1>Payment link not found</h1>
    <p>This payment link does not exist. Check the link you were given, or ask the merchant for a new one.</p>
  </section>
</main>
</body>
</html>
`.markup;
}
