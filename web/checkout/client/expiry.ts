import { formatTimeRemaining } from '../../timeLeft';
import type { CheckoutClientData } from '../clientData';
import type { SessionStatus } from './sessionStatus';

/** After expiry the page is loaded again once, so the server can tell expired from underpaid. */
const RELOAD_AFTER_EXPIRY_MS = 3000;

/**
 * The request expired while the page was open: show it at once, then load the page again so that a
 * partial payment that arrived in time shows as underpaid, with what was received.
 */
export function expiredHere(session: SessionStatus): void {
  session.show('expired');
  setTimeout(() => window.location.reload(), RELOAD_AFTER_EXPIRY_MS);
}

/** Counts down to the expiry by the server's clock, every whole second, and expires the page at zero. */
export function startCountdown(data: CheckoutClientData, session: SessionStatus): void {
  // The server's clock decides expiry; measure how far this device's clock is off from it.
  const clockOffsetMs = Date.parse(data.serverNow) - Date.now();
  const expiresAtMs = Date.parse(data.expiresAt);
  const countdown = document.querySelector('[data-countdown]');
  const tick = () => {
    const remaining = expiresAtMs - (Date.now() + clockOffsetMs);
    if (countdown) countdown.textContent = formatTimeRemaining(remaining);
    // Expiry is the server's rule too (awaiting_payment past expiresAt reads as expired).
    if (remaining <= 0 && session.awaitingPayment) expiredHere(session);
    setTimeout(tick, 1000 - ((Date.now() + clockOffsetMs) % 1000));
  };
  tick();
}
