import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { post } from '../api';
import type { WebhookEndpoint } from '../types';

/** The webhook endpoints' JWT routes. */
export const WEBHOOKS = '/v1/merchants/me/webhooks';

/** What an endpoint's badge says: enabled, disabled by the merchant, or failed (disabled by the service). */
export const endpointStatus = (endpoint: WebhookEndpoint) =>
  endpoint.enabled ? 'enabled' : endpoint.disabledReason ? 'failed' : 'disabled';

/**
 * "Send a test event": a signed `endpoint.test` to this endpoint, delivered and recorded like any event
 * and never counted toward disabling it. `sent` says where its delivery can be seen.
 */
export function SendTestEvent({
  endpoint,
  sent,
}: {
  endpoint: WebhookEndpoint;
  sent: (deliveryId: string) => ComponentChildren;
}) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<
    { ok: true; eventId: string; note: ComponentChildren } | { ok: false; message: string }
  >();
  const send = async () => {
    setBusy(true);
    setResult(undefined);
    try {
      const answer = await post<{ eventId: string; deliveryId: string }>(
        `${WEBHOOKS}/${endpoint.id}/send-test-event`,
      );
      setResult({ ok: true, eventId: answer.eventId, note: sent(answer.deliveryId) });
    } catch (caught) {
      setResult({ ok: false, message: (caught as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="test-event">
      <button
        type="button"
        onClick={send}
        disabled={busy}
        aria-label={`Send a test event to ${endpoint.url}`}
      >
        {busy ? 'Sending…' : 'Send a test event'}
      </button>
      {result?.ok && (
        <p class="notice success" role="status">
          Test event <code>{result.eventId}</code> sent. {result.note}
        </p>
      )}
      {result && !result.ok && (
        <p class="field-error" role="alert">
          {result.message}
        </p>
      )}
    </div>
  );
}
