import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './events';

/** Why a webhook request was refused; branch on `reason`, not on the message. */
export type WebhookVerificationFailure =
  'malformed_header' | 'timestamp_too_old' | 'timestamp_in_future' | 'signature_mismatch' | 'malformed_body';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifyWebhookOptions {
  /** How far `t=` may lie from the receiver's clock, either way (default 300 s). */
  toleranceSec?: number;
  /** The receiver's clock (default: now). */
  now?: Date;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * Checks `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]` against the raw body and returns
 * the typed event. `secrets` may be one `whsec_` secret or several (the new and the previous one while
 * you rotate): the request passes when any `v1` matches any secret, compared in constant time. Pass
 * the body exactly as received (string or bytes), never a re-serialised object.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeader: string | null | undefined,
  secrets: string | readonly string[],
  { toleranceSec = 300, now = new Date() }: VerifyWebhookOptions = {},
): WebhookEvent {
  const { timestamp, signatures } = parseSignatureHeader(signatureHeader ?? '');
  const nowSec = Math.floor(now.getTime() / 1000);
  if (timestamp < nowSec - toleranceSec)
    throw new WebhookVerificationError('timestamp_too_old', 'Webhook timestamp is older than the tolerance');
  if (timestamp > nowSec + toleranceSec)
    throw new WebhookVerificationError('timestamp_in_future', 'Webhook timestamp is too far in the future');
  let matched = false;
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
    // Every pair is compared in full, so the time taken says nothing about which one matched.
    for (const candidate of signatures)
      matched = timingSafeEqual(expected, Buffer.from(candidate, 'hex')) || matched;
  }
  if (!matched)
    throw new WebhookVerificationError('signature_mismatch', 'No v1 signature matches the secret(s)');
  try {
    return JSON.parse(
      typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8'),
    ) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('malformed_body', 'Webhook body is not JSON');
  }
}

function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    const key = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    // Unknown schemes (a future v2) are skipped, so a receiver keeps working while the sender adds one.
    if (key === 'v1' && HEX_SHA256.test(value)) signatures.push(value);
  }
  if (timestamp === undefined || signatures.length === 0)
    throw new WebhookVerificationError(
      'malformed_header',
      'Signature header must look like t=<unix seconds>,v1=<hex>',
    );
  return { timestamp, signatures };
}
