import type { components } from '../../../sdk/src/generated/openapi';
import type { CheckoutClientData } from '../clientData';
import { expiredHere } from './expiry';
import type { SessionStatus } from './sessionStatus';

export const POLL_INTERVAL_MS = 2000;
const MAX_POLL_INTERVAL_MS = 15000;

/** What GET /v1/sessions/{id}/status answers: the contract's type, from the SDK. */
type StatusView = components['schemas']['SessionStatusView'];

async function readStatus(statusUrl: string): Promise<StatusView> {
  const response = await fetch(statusUrl, { cache: 'no-store', headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`status ${response.status}`);
  return (await response.json()) as StatusView;
}

/** Asks GET /v1/sessions/{id}/status after `delayMs`, shows what changed, and goes on while the page needs it. */
export function poll(data: CheckoutClientData, session: SessionStatus, delayMs: number): void {
  setTimeout(() => {
    readStatus(data.statusUrl).then(
      (view) => {
        session.webhookDelivered = view.webhookDelivered === true;
        if (view.status === 'expired' && session.awaitingPayment) expiredHere(session);
        else if (view.status !== session.status) session.show(view.status);
        if (session.shouldRedirect()) session.redirect();
        if (session.needsPolling()) poll(data, session, POLL_INTERVAL_MS);
      },
      // Offline or a server hiccup: keep trying, backing off gently.
      () => poll(data, session, Math.min(delayMs * 2, MAX_POLL_INTERVAL_MS)),
    );
  }, delayMs);
}
