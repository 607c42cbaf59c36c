import { join } from 'node:path';
import type { PlanInterval } from '../../db/schema';
import { fromBaseUnits } from '../../money/baseUnits';
import { periodSeconds } from '../../subscriptions/periods';
import { formatUsd } from '../checkout/formatAmount';
import { html, jsonForScriptElement, trustedHtml, type SafeHtml } from '../html';
import { readPageScript } from '../pageScript';
import { publicPageHead, readPublicPageStylesheets } from '../publicPageHead';
import { SUBSCRIBE_DATA_ELEMENT_ID, type SubscribeClientData, type SubscribeOption } from './clientData';
import { periodLabel, permissionSentences } from './permissionWording';

/**
 * The subscribe page `/subscribe/<planId>` (issue 42): the plan (name, amount per period, period, trial),
 * the chain and stablecoin to pay with, and — before any wallet prompt — what the customer allows, in
 * words. Its script (client/, bundled into web/dist/subscribe.js) connects an injected EIP-1193 wallet,
 * asks it for the ERC-7715 `erc20-token-periodic` permission to the platform's subscription executor and
 * posts the granted delegation to `POST /v1/subscribe/{planId}`, then shows the subscription and its manage
 * link. The checkout page's look and CSP: everything inline under the response's nonce, no external request.
 */

export interface SubscribePlanView {
  id: string;
  name: string;
  /** Decimal USD per period. */
  amount: string;
  interval: PlanInterval;
  intervalCount: number;
  trialDays: number;
  archived: boolean;
  merchantName: string | null;
}

const css = readPublicPageStylesheets('subscribe', join('subscribe', 'subscribe.css'));
const subscribeScript = readPageScript('subscribe.js');

const head = (title: string, nonce: string): SafeHtml => publicPageHead(title, nonce, css);

const optionLabel = (option: SubscribeOption) => `${option.symbol} on ${option.network}`;

export function renderSubscribePage({
  plan,
  options,
  now,
  nonce,
}: {
  plan: SubscribePlanView;
  options: SubscribeOption[];
  now: Date;
  nonce: string;
}): string {
  const merchant = plan.merchantName ?? 'The merchant';
  const period = periodLabel(plan.interval, plan.intervalCount);
  const clientData: SubscribeClientData = {
    planId: plan.id,
    subscribeUrl: `/v1/subscribe/${plan.id}`,
    merchantName: merchant,
    amountLabel: formatUsd(plan.amount),
    periodLabel: period,
    periodSeconds: Number(periodSeconds(plan.interval, plan.intervalCount)),
    serverNow: now.toISOString(),
    trialDays: plan.trialDays,
    options,
  };
  const first = options[0];
  const words =
    first &&
    permissionSentences({
      merchantName: merchant,
      tokenAmount: fromBaseUnits(BigInt(first.periodAmount), first.decimals),
      symbol: first.symbol,
      network: first.network,
      periodLabel: period,
      firstChargeAt: new Date(now.getTime() + plan.trialDays * 86_400_000),
      trialDays: plan.trialDays,
    });
  const open = !plan.archived && options.length > 0;
  return html`<!doctype html>
    <html lang="en">
      ${head(`Subscribe to ${plan.name} · ${formatUsd(plan.amount)} every ${period}`, nonce)}
      <body data-status="${open ? 'open' : 'closed'}">
        <main class="checkout">
          <header class="merchant">
            <div class="merchant-text">
              <p class="eyebrow">Subscribe to ${merchant}</p>
              <h1 class="merchant-name" data-testid="plan-name">${plan.name}</h1>
            </div>
          </header>
          <section class="card summary" aria-label="Plan">
            <p class="total-label">Every ${period}</p>
            <p class="total-amount" data-testid="plan-amount">${formatUsd(plan.amount)}</p>
            <p class="hint" data-testid="plan-trial">
              ${
                plan.trialDays > 0
                  ? `Free for ${plan.trialDays} days, then charged every ${period}.`
                  : `Charged now, then every ${period}.`
              }
            </p>
          </section>
          ${open ? subscribeForm(options, words ?? []) : closedCard(plan.archived, merchant)}
        </main>
        ${
          open &&
          html`<script type="application/json" id="${SUBSCRIBE_DATA_ELEMENT_ID}">
              ${jsonForScriptElement(clientData)}
            </script>
            <script nonce="${nonce}">
              ${trustedHtml(subscribeScript)};
            </script>`
        }
      </body>
    </html> `.markup;
}

/** The chooser, the words and the wallet buttons; then, once subscribed, the subscription. */
function subscribeForm(options: SubscribeOption[], words: string[]): SafeHtml {
  return html`<section class="card pay" data-subscribe-form aria-labelledby="subscribe-allow">
      <label class="field">
        <span class="field-label">Pay with</span>
        <select class="subscribe-select" name="option" data-testid="subscribe-option">
          ${options.map((option) => html`<option value="${option.key}">${optionLabel(option)}</option>`)}
        </select>
      </label>
      <h2 id="subscribe-allow" class="field-label">What you allow</h2>
      <ul class="permission-words" data-permission-words data-testid="permission-words">
        ${words.map((sentence) => html`<li>${sentence}</li>`)}
      </ul>
      <p class="hint" data-account hidden data-testid="subscribe-account"></p>
      <p
        class="hint subscribe-error"
        role="alert"
        data-subscribe-error
        data-testid="subscribe-error"
        hidden
      ></p>
      <button type="button" class="subscribe-button" data-connect data-testid="subscribe-connect">
        Connect wallet
      </button>
      <button type="button" class="subscribe-button" data-grant data-testid="subscribe-grant" hidden>
        Allow and subscribe
      </button>
      <p class="hint" data-no-wallet hidden>
        No browser wallet was found. Open this page in a wallet's browser, or in a browser with a wallet
        extension.
      </p>
    </section>
    <section
      class="card state state-success"
      data-subscribed
      hidden
      aria-live="polite"
      data-testid="subscribed"
    >
      <h2>Subscribed</h2>
      <dl class="subscribe-facts">
        <dt>Status</dt>
        <dd data-subscription-status data-testid="subscription-status"></dd>
        <dt>Account</dt>
        <dd data-subscription-account></dd>
        <dt data-next-label>Next charge</dt>
        <dd data-subscription-next></dd>
      </dl>
      <p data-manage hidden>
        Keep this link to see or cancel your subscription:
        <a data-manage-link data-testid="manage-link" href="#">manage your subscription</a>
      </p>
    </section>`;
}

function closedCard(archived: boolean, merchant: string): SafeHtml {
  return html`<section class="card state state-muted" data-testid="subscribe-closed">
    <h2>${archived ? 'This plan takes no new subscribers' : 'Subscriptions are not available'}</h2>
    <p>Contact ${merchant} if you expected to subscribe.</p>
  </section>`;
}

/** The page for an unknown plan (404): no script, nothing to grant. */
export function renderSubscribeNotFoundPage({ nonce }: { nonce: string }): string {
  return html`<!doctype html>
    <html lang="en">
      ${head('Plan not found', nonce)}
      <body data-status="closed">
        <main class="checkout">
          <section class="card state state-muted">
            <h1>Plan not found</h1>
            <p>This subscription link does not exist. Check the link you were given, or ask the merchant.</p>
          </section>
        </main>
      </body>
    </html> `.markup;
}
