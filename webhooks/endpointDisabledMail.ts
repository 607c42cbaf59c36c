import type { MailMessage } from '../mail/mailer';

/**
 * The mail that tells a merchant one of its endpoints was disabled for failing (docs/operations.md "A webhook endpoint disabled for failing"): which
 * endpoint, since when, and the two calls that bring it back (re-enable, then recover what it missed).
 */
export function endpointDisabledMail({
  to,
  endpoint,
}: {
  to: string;
  endpoint: { id: string; url: string; disabledAt: string };
}): MailMessage {
  return {
    to,
    subject: 'StablePay: a webhook endpoint was disabled',
    text: [
      `Every delivery to your webhook endpoint ${endpoint.url} (id ${endpoint.id}) has failed for 5 days,`,
      `so it was disabled at ${endpoint.disabledAt}. Events are no longer sent to it.`,
      '',
      'When the receiver works again:',
      `  1. PATCH /v1/webhooks/${endpoint.id} with {"enabled": true} to enable it;`,
      `  2. POST /v1/webhooks/${endpoint.id}/recover with {"since": "<when it started failing>"} to send the missed events again.`,
      '',
      'The deliveries list (GET /v1/webhooks/<id>/deliveries) shows every failed attempt and its error.',
    ].join('\n'),
  };
}
