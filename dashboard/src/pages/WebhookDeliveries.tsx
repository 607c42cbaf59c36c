import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post } from '../api';
import { Async, useLoad } from '../components/async';
import { daysBetween, DailyChart } from '../components/chart';
import { StatusBadge, Time } from '../components/bits';
import { Field, FormError, useForm } from '../components/form';
import type { WebhookDelivery } from '../types';

const path = (endpointId: string) => `/v1/merchants/me/webhooks/${endpointId}`;

/** Deliveries of the last 100 by day and outcome: how an endpoint has been doing. */
export function DeliveryChart({ endpointId }: { endpointId: string }) {
  const deliveries = useLoad(
    () => get<{ data: WebhookDelivery[] }>(`${path(endpointId)}/deliveries?limit=100`),
    [endpointId],
  );
  if (!deliveries.data) return null;
  const days = daysBetween(deliveries.data.data.map((delivery) => delivery.createdAt.slice(0, 10)));
  const count = (status: string) =>
    days.map(
      (day) => deliveries.data!.data.filter((d) => d.status === status && d.createdAt.startsWith(day)).length,
    );
  const succeeded = count('succeeded');
  const failed = count('failed');
  const pending = count('pending');
  const total = (values: number[]) => values.reduce((sum, value) => sum + value, 0);
  return (
    <DailyChart
      days={days}
      valueLabel="deliveries"
      counts
      series={[
        { label: 'succeeded', values: succeeded, color: '#1b6e3a' },
        { label: 'failed', values: failed, color: '#b3261e' },
        { label: 'pending', values: pending, color: '#b07a00' },
      ]}
      summary={`Deliveries by day: ${total(succeeded)} succeeded, ${total(failed)} failed, ${total(pending)} pending`}
    />
  );
}

/** How long a followed delivery is waited for (its first attempt is made within seconds). */
const FOLLOW_MS = 30_000;

/**
 * The endpoint's deliveries with their attempts, resend and recover. `follow` names a delivery just
 * asked for (a test event): the list is read again each second until it shows that delivery's first
 * attempt, for at most FOLLOW_MS.
 */
export function Deliveries({ endpointId, follow }: { endpointId: string; follow?: string }) {
  const [status, setStatus] = useState('');
  const deliveries = useLoad(
    () =>
      get<{ data: WebhookDelivery[]; total: number }>(
        `${path(endpointId)}/deliveries?limit=20${status ? `&status=${status}` : ''}`,
      ),
    [endpointId, status, follow],
  );
  const followedSince = useRef(0);
  useEffect(() => {
    followedSince.current = Date.now();
  }, [follow]);
  useEffect(() => {
    if (!follow || !deliveries.data || Date.now() - followedSince.current > FOLLOW_MS) return;
    const shown = deliveries.data.data.find((delivery) => delivery.id === follow);
    if (shown && shown.attemptCount > 0) return;
    const timer = setTimeout(deliveries.reload, 1000);
    return () => clearTimeout(timer);
  }, [follow, deliveries.data]);
  const [message, setMessage] = useState<{ ok: boolean; text: string }>();
  const resend = async (delivery: WebhookDelivery) => {
    setMessage(undefined);
    try {
      await post(`${path(endpointId)}/deliveries/${delivery.id}/resend`);
      setMessage({ ok: true, text: `Event ${delivery.eventId} queued again as a new delivery.` });
      deliveries.reload();
    } catch (caught) {
      setMessage({ ok: false, text: (caught as Error).message });
    }
  };
  const recover = useForm(
    async (data) => {
      const hours = Number(String(data.get('hours') ?? '24'));
      const since = new Date(Date.now() - (Number.isFinite(hours) ? hours : 24) * 3600_000).toISOString();
      const result = await post<{ queued: number }>(`${path(endpointId)}/recover`, { since });
      setMessage({
        ok: true,
        text: `${result.queued} failed event${result.queued === 1 ? '' : 's'} queued again.`,
      });
      deliveries.reload();
    },
    ['since'],
  );
  return (
    <>
      <div class="filters" role="group" aria-label="Filter deliveries by status">
        {['', 'pending', 'succeeded', 'failed', 'canceled'].map((value) => (
          <button type="button" key={value} aria-pressed={status === value} onClick={() => setStatus(value)}>
            {value || 'All'}
          </button>
        ))}
      </div>
      {message && (
        <p class={message.ok ? 'notice success' : 'field-error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <Async state={deliveries} isEmpty={(result) => result.data.length === 0} empty="No deliveries yet.">
        {(result) => (
          <ul class="deliveries">
            {result.data.map((delivery) => (
              <li key={delivery.id} data-testid="delivery">
                <details>
                  <summary>
                    <StatusBadge status={delivery.status} /> {delivery.eventType} ·{' '}
                    <Time iso={delivery.createdAt} /> · {delivery.attemptCount} attempt
                    {delivery.attemptCount === 1 ? '' : 's'}
                    {delivery.resendOf && <span class="muted"> · re-send</span>}
                  </summary>
                  <p class="muted">
                    Event <code>{delivery.eventId}</code>
                    {delivery.nextAttemptAt && (
                      <>
                        {' '}
                        · next attempt <Time iso={delivery.nextAttemptAt} />
                      </>
                    )}
                  </p>
                  <ol>
                    {delivery.attempts.map((attempt) => (
                      <li key={attempt.attemptNumber}>
                        <Time iso={attempt.attemptedAt} />: {attempt.outcome.replace(/_/g, ' ')}
                        {attempt.statusCode !== null && ` (HTTP ${attempt.statusCode})`} in{' '}
                        {attempt.latencyMs} ms
                        {attempt.error && <span class="muted"> — {attempt.error}</span>}
                      </li>
                    ))}
                  </ol>
                </details>
                <button
                  type="button"
                  onClick={() => resend(delivery)}
                  aria-label={`Resend event ${delivery.eventId}`}
                >
                  Resend
                </button>
              </li>
            ))}
          </ul>
        )}
      </Async>
      <form onSubmit={recover.submit} noValidate class="recover">
        <Field
          label="Send again every event that failed in the last (hours)"
          hint="At most 336 (14 days)"
          error={recover.errorFor('since')}
        >
          {(props) => <input {...props} name="hours" inputMode="numeric" defaultValue="24" />}
        </Field>
        <FormError form={recover} />
        <button type="submit" disabled={recover.busy}>
          Recover failed events
        </button>
      </form>
    </>
  );
}
