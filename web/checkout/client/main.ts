/**
 * The checkout page's script, bundled by dashboard/buildPageScripts.ts and inlined by
 * renderCheckoutPage.ts under the page's CSP nonce: the token × network chooser, copy buttons, the
 * expiry countdown, and live status from GET /v1/sessions/{id}/status every 2 s, redirecting to
 * successUrl once the merchant's webhook was delivered (never before).
 */
import { CHECKOUT_DATA_ELEMENT_ID, type CheckoutClientData } from '../clientData';
import { startCopyButtons } from './copyButtons';
import { startCountdown } from './expiry';
import { startOptionChooser } from './optionChooser';
import { SessionStatus } from './sessionStatus';
import { poll, POLL_INTERVAL_MS } from './statusPolling';

const data = JSON.parse(
  document.getElementById(CHECKOUT_DATA_ELEMENT_ID)!.textContent!,
) as CheckoutClientData;
const session = new SessionStatus(data);

startOptionChooser();
startCopyButtons();
session.show(session.status);
startCountdown(data, session);
if (session.shouldRedirect()) session.redirect();
else if (session.needsPolling()) poll(data, session, POLL_INTERVAL_MS);
