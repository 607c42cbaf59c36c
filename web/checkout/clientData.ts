/**
 * What renderCheckoutPage.ts hands the page's script in its `checkout-data` JSON block: the session's
 * status and expiry as the server saw them, where to poll, and where to send the payer once paid.
 */
export interface CheckoutClientData {
  sessionId: string;
  statusUrl: string;
  status: string;
  webhookDelivered: boolean;
  expiresAt: string;
  /** The server's clock when it rendered the page: expiry follows it, not the payer's device. */
  serverNow: string;
  successUrl: string | null;
  statusLabels: Record<string, string>;
}

export const CHECKOUT_DATA_ELEMENT_ID = 'checkout-data';
