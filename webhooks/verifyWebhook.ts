import { timingSafeEqual } from 'node:crypto';
import { computeWebhookSignature } from './signWebhookPayload';

/** Why a webhook request was not accepted; receivers branch on `reason`, not on the message. */
export type WebhookVerificationFailure =
  'malformed_header' | 'timestamp_too_old' | 'timestamp_in_future' | 'signature_mismatch' | 'malformed_body';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(`${message} (see README: Receiving webhooks)`);
  }
}

export interface VerifyWebhookOptions {
  /** How far `t=` may lie from `now`, either way; SPEC says about 300 seconds. */
  toleranceSec?: number;
  /** The receiver's clock; the current time by default. */
  now?: Date;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * Checks an `X-Service-Signature` header against the raw request body and the endpoint secret,
 * and returns the parsed event. Throws a WebhookVerificationError when the header is malformed,
 * the timestamp is outside the tolerance (stale or in the future) or no `v1=` signature matches.
 * Pass the body exactly as received (a string or the raw bytes), never a re-serialised object.
 */
export function verifyWebhook<Event = unknown>(
  rawBody: string | Uint8Array,
  signatureHeader: string | undefined | null,
  secret: string,
  { toleranceSec = 300, now = new Date() }: VerifyWebhookOptions = {},
): Event {
  const { timestamp, signatures } = parseSignatureHeader(signatureHeader ?? '');
  const nowSec = Math.floor(now.getTime() / 1000);
  if (timestamp < nowSec - toleranceSec)
    throw new WebhookVerificationError('timestamp_too_old', 'Webhook timestamp is too old');
  if (timestamp > nowSec + toleranceSec)
    throw new WebhookVerificationError('timestamp_in_future', 'Webhook timestamp is too far in the future');

  const expected = Buffer.from(computeWebhookSignature(rawBody, secret, timestamp), 'hex');
  // Every candidate is compared in full (constant time); several appear only while a sender rotates keys.
  let matched = false;
  for (const candidate of signatures)
    matched = timingSafeEqual(expected, Buffer.from(candidate, 'hex')) || matched;
  if (!matched) throw new WebhookVerificationError('signature_mismatch', 'Webhook signature does not match');

  try {
    return JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8')) as Event;
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
  if (timestamp === undefined || signatures.length === 0) {
    throw new WebhookVerificationError(
      'malformed_header',
      'Webhook signature header must look like t=<unix seconds>,v1=<hex>',
    );
  }
  return { timestamp, signatures };
}
