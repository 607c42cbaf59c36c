import { createHmac } from 'node:crypto';

/** The header that carries `t=<unix seconds>,v1=<hex HMAC-SHA256>` (SPEC: Events). */
export const SIGNATURE_HEADER = 'X-Service-Signature';
/** The header that carries the event id, so receivers can drop duplicates (delivery is at least once). */
export const EVENT_ID_HEADER = 'X-Service-Event-Id';

export interface SignWebhookPayloadParameters {
  /** The exact bytes that are sent as the request body. */
  rawBody: string | Uint8Array;
  /** The endpoint's `whsec_…` secret; its UTF-8 bytes are the HMAC key. */
  secret: string;
  /**
   * The secret before a rotation, while its overlap lasts: its signature follows the new one as a
   * second `v1=`, so a receiver holding either secret verifies the request (docs/decisions.md "Webhook delivery operations").
   */
  previousSecret?: string | null;
  /** Unix seconds written into `t=`; the current time by default. */
  timestamp?: number;
}

export interface SignedWebhookPayload {
  timestamp: number;
  /** Lower-case hex HMAC-SHA256 over `<timestamp>.<raw body>`. */
  signature: string;
  /** The full `X-Service-Signature` value: `t=<timestamp>,v1=<signature>[,v1=<previous secret's>]`. */
  header: string;
}

/** The HMAC-SHA256 (hex) of `<timestamp>.<raw body>` keyed by the secret: what `v1=` carries. */
export function computeWebhookSignature(
  rawBody: string | Uint8Array,
  secret: string,
  timestamp: number,
): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/** The signature header for one delivery attempt of a webhook body. */
export function signWebhookPayload({
  rawBody,
  secret,
  previousSecret,
  timestamp = Math.floor(Date.now() / 1000),
}: SignWebhookPayloadParameters): SignedWebhookPayload {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new RangeError(`timestamp must be whole unix seconds, got ${timestamp}`);
  const signature = computeWebhookSignature(rawBody, secret, timestamp);
  const previous = previousSecret ? `,v1=${computeWebhookSignature(rawBody, previousSecret, timestamp)}` : '';
  return { timestamp, signature, header: `t=${timestamp},v1=${signature}${previous}` };
}
