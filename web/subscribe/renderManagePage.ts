import { join } from 'node:path';
import { networkByChainId } from '../../config/networks';
import type { SubscriptionStatus } from '../../db/schema';
import { formatUsd } from '../checkout/formatAmount';
import { html, jsonForScriptElement, trustedHtml, type SafeHtml } from '../html';
import { readPageScript } from '../pageScript';
import { publicPageHead, readPublicPageStylesheets } from '../publicPageHead';
import { MANAGE_DATA_ELEMENT_ID, type ManageClientData } from './clientData';
import { dayLabel, endingSentence } from './permissionWording';

/**
 * The customer's manage page `/subscribe/manage/<token>` (issue 42): the subscription (plan, amount per
 * period, status, next charge, account) and, while it still charges, "Cancel subscription" with an in-page
 * confirmation; the script (client/manage.ts, web/dist/subscriptionManage.js) posts the cancelation and shows
 * the outcome. The customer cancels at the end of the period already paid: nothing is charged after.
 */

export interface ManageView {
  planName: string;
  merchantName: string | null;
  amount: string;
  periodLabel: string;
  status: SubscriptionStatus;
  customerAccount: string;
  chainId: number;
  token: string;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd: boolean;
}

const css = readPublicPageStylesheets('subscribe', join('subscribe', 'subscribe.css'));
const manageScript = readPageScript('subscriptionManage.js');

const head = (title: string, nonce: string): SafeHtml => publicPageHead(title, nonce, css);

const STATUS_WORDS: Record<SubscriptionStatus, string> = {
  trialing: 'Trial',
  active: 'Active',
  past_due: 'Payment overdue',
  canceled: 'Canceled',
};

export function renderManagePage({
  view,
  cancelUrl,
  nonce,
}: {
  view: ManageView;
  cancelUrl: string;
  nonce: string;
}): string {
  const merchant = view.merchantName ?? 'the merchant';
  const ending = endingSentence(view);
  const network = networkByChainId(view.chainId)?.displayName ?? String(view.chainId);
  const clientData: ManageClientData = { cancelUrl };
  return html`<!doctype html>
    <html lang="en">
      ${head(`Your subscription · ${view.planName}`, nonce)}
      <body data-status="${view.status}">
        <main class="checkout">
          <header class="merchant">
            <div class="merchant-text">
              <p class="eyebrow">Your subscription to ${merchant}</p>
              <h1 class="merchant-name" data-testid="plan-name">${view.planName}</h1>
            </div>
          </header>
          <section class="card" aria-label="Subscription">
            <dl class="subscribe-facts">
              <dt>Amount</dt>
              <dd>${formatUsd(view.amount)} in ${view.token} on ${network}, every ${view.periodLabel}</dd>
              <dt>Status</dt>
              <dd data-testid="manage-status">${STATUS_WORDS[view.status]}</dd>
              <dt>Account</dt>
              <dd>${view.customerAccount}</dd>
              ${
                !ending &&
                html`<dt data-next-charge>${view.status === 'trialing' ? 'First charge' : 'Next charge'}</dt>
                  <dd data-next-charge>${dayLabel(view.currentPeriodEnd)}</dd>`
              }
            </dl>
          </section>
          <section
            class="card state state-muted"
            data-ended
            ${!ending && trustedHtml('hidden')}
            aria-live="polite"
          >
            <p data-ended-text data-testid="manage-ended">${ending ?? ''}</p>
          </section>
          ${
            !ending &&
            html`<section class="card" data-cancel-area aria-label="Cancel">
              <p class="hint">
                Canceling stops every future charge. The period already paid runs to its end on
                ${dayLabel(view.currentPeriodEnd)}.
              </p>
              <button
                type="button"
                class="subscribe-button secondary"
                data-cancel
                data-testid="manage-cancel"
              >
                Cancel subscription
              </button>
              <div data-confirm hidden>
                <p id="manage-confirm-question">
                  Cancel your subscription to ${view.planName}? This cannot be undone.
                </p>
                <button
                  type="button"
                  class="subscribe-button"
                  data-confirm-yes
                  aria-describedby="manage-confirm-question"
                  data-testid="manage-confirm"
                >
                  Yes, cancel
                </button>
                <button type="button" class="subscribe-button secondary" data-confirm-no>Keep it</button>
              </div>
              <p class="hint subscribe-error" role="alert" data-manage-error hidden></p>
            </section>`
          }
        </main>
        ${
          !ending &&
          html`<script type="application/json" id="${MANAGE_DATA_ELEMENT_ID}">
              ${jsonForScriptElement(clientData)}
            </script>
            <script nonce="${nonce}">
              ${trustedHtml(manageScript)};
            </script>`
        }
      </body>
    </html> `.markup;
}

/** An unknown manage link (404): nothing to show. */
export function renderManageNotFoundPage({ nonce }: { nonce: string }): string {
  return html`<!doctype html>
    <html lang="en">
      ${head('Subscription link not found', nonce)}
      <body data-status="closed">
        <main class="checkout">
          <section class="card state state-muted">
            <h1>Subscription link not found</h1>
            <p>Check the link you were given when you subscribed.</p>
          </section>
        </main>
      </body>
    </html> `.markup;
}
