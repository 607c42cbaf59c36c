/**
 * How webhook deliveries are retried and bounded (SPEC: Limits): the one place these numbers live.
 * Plain data, safe to import from workflow code.
 */
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** Pauses between consecutive attempts: 1 m, 5 m, 30 m, 2 h, so attempts at +0, +1 m, +6 m, +36 m, +2 h 36 m. */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [
  1 * MINUTE_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
];

/** The first attempt plus one per pause: 5. */
export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY_DELAYS_MS.length + 1;

/** One attempt (the activity, and the HTTP request inside it) gives up after this long. */
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;

/** How much of a receiver's answer an attempt record keeps. */
export const WEBHOOK_RESPONSE_BODY_LIMIT_BYTES = 1024;

/** At most this many endpoints per merchant (SPEC: Limits). */
export const WEBHOOK_ENDPOINT_LIMIT = 5;

/** Resends and recoveries per endpoint and UTC hour, across every api replica (docs/decisions.md "Webhook delivery operations"). */
export const WEBHOOK_ENDPOINT_OPERATIONS_PER_HOUR = 60;

/** How far back a recovery may reach (docs/decisions.md "Webhook delivery operations": 14 days). */
export const WEBHOOK_RECOVERY_WINDOW_MS = 14 * 24 * HOUR_MS;

/** Events one recovery queues at most; a larger backlog takes another call (the answer says how many). */
export const WEBHOOK_RECOVERY_MAX_EVENTS = 1000;

/** An endpoint whose every attempt has failed for this long is disabled (docs/operations.md "A webhook endpoint disabled for failing": 5 days). */
export const WEBHOOK_DISABLE_AFTER_FAILING_MS = 5 * 24 * HOUR_MS;
