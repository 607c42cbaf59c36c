import type { CheckoutClientData } from '../clientData';

/** Statuses in which the payer still has to pay. */
export const PAY_STATES = ['pending', 'awaiting_payment'];
/** Ended here for good: no redirect, no more polling (underpaid is an expired session partly paid). */
const ENDED_STATES = ['failed', 'expired', 'underpaid'];
const REDIRECT_DELAY_MS = 1200;

/** The session as the page last saw it, and the blocks that show it. */
export class SessionStatus {
  status: string;
  webhookDelivered: boolean;
  private redirecting = false;

  constructor(private readonly data: CheckoutClientData) {
    this.status = data.status;
    this.webhookDelivered = data.webhookDelivered;
  }

  get awaitingPayment(): boolean {
    return PAY_STATES.includes(this.status);
  }

  /** Shows the blocks of `status` (each names its states in `data-show-when`) and its label. */
  show(status: string): void {
    this.status = status;
    document.body.setAttribute('data-status', status);
    document.querySelectorAll<HTMLElement>('[data-show-when]').forEach((element) => {
      element.hidden = !element.getAttribute('data-show-when')!.split(' ').includes(status);
    });
    const label = document.querySelector('[data-status-label]');
    if (label) label.textContent = this.data.statusLabels[status] || status;
  }

  /** The redirect waits for the webhook delivery (SPEC: Events); a failed or expired session stays here. */
  shouldRedirect(): boolean {
    return this.webhookDelivered && this.safeSuccessUrl() !== null && !ENDED_STATES.includes(this.status);
  }

  redirect(): void {
    this.redirecting = true;
    document.querySelector<HTMLElement>('[data-redirect-notice]')!.hidden = false;
    setTimeout(() => window.location.assign(this.safeSuccessUrl()!), REDIRECT_DELAY_MS);
  }

  needsPolling(): boolean {
    if (this.redirecting || ENDED_STATES.includes(this.status)) return false;
    // A completed session is final; keep asking only while a redirect still waits for the webhook.
    return this.status !== 'completed' || this.safeSuccessUrl() !== null;
  }

  private safeSuccessUrl(): string | null {
    if (!this.data.successUrl) return null;
    try {
      const url = new URL(this.data.successUrl);
      return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
    } catch {
      return null;
    }
  }
}
