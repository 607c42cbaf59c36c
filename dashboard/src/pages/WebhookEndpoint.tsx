import { useState } from 'preact/hooks';
import { del, get, patch, post } from '../api';
import { navigate } from '../router';
import { Async, useLoad } from '../components/async';
import { Section, ShownOnce, StatusBadge, Time } from '../components/bits';
import { chosenEventTypes, EventTypeChoices } from '../components/eventTypes';
import { Field, FormError, useForm } from '../components/form';
import { DeliveryChart, Deliveries } from './WebhookDeliveries';
import { endpointStatus, SendTestEvent, WEBHOOKS } from '../components/webhookEndpoint';
import type { WebhookEndpoint as Endpoint } from '../types';

/**
 * One endpoint: what it receives (changed with a PATCH, the API's message beside the field it names),
 * enable, delete, a test event, the secret's rotation and its deliveries.
 */
export function WebhookEndpoint({ id }: { id: string }) {
  const endpoint = useLoad(() => get<Endpoint>(`${WEBHOOKS}/${encodeURIComponent(id)}`), [id]);
  // A test event's delivery, followed on the list below until its first attempt is recorded.
  const [testDelivery, setTestDelivery] = useState<string>();
  return (
    <Async state={endpoint}>
      {(current) => (
        <>
          <Section
            title={current.description ?? current.url}
            actions={<StatusBadge status={endpointStatus(current)} />}
          >
            <p>
              <code>{current.url}</code>{' '}
              <span class="muted">
                · added <Time iso={current.createdAt} />
              </span>
            </p>
            <EndpointActions endpoint={current} onChange={endpoint.reload} />
            <SendTestEvent
              endpoint={current}
              sent={(deliveryId) => {
                setTestDelivery(deliveryId);
                return <>Its delivery is listed below.</>;
              }}
            />
          </Section>
          <EditEndpoint key={current.id} endpoint={current} onSaved={endpoint.reload} />
          <RotateSecret endpoint={current} />
          <Section title="Deliveries">
            <DeliveryChart endpointId={current.id} />
            <Deliveries endpointId={current.id} follow={testDelivery} />
          </Section>
        </>
      )}
    </Async>
  );
}

function EndpointActions({ endpoint, onChange }: { endpoint: Endpoint; onChange: () => void }) {
  const [actionError, setActionError] = useState<string>();
  const act = async (run: () => Promise<unknown>, then: () => void = onChange) => {
    setActionError(undefined);
    try {
      await run();
      then();
    } catch (caught) {
      setActionError((caught as Error).message);
    }
  };
  return (
    <>
      <div class="actions">
        <button
          type="button"
          onClick={() => act(() => patch(`${WEBHOOKS}/${endpoint.id}`, { enabled: !endpoint.enabled }))}
        >
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </button>
        <button
          type="button"
          class="danger"
          onClick={() =>
            confirm(`Delete ${endpoint.url} and its delivery history?`) &&
            act(
              () => del(`${WEBHOOKS}/${endpoint.id}`),
              () => navigate('/webhooks'),
            )
          }
        >
          Delete
        </button>
      </div>
      {actionError && (
        <p class="field-error" role="alert">
          {actionError}
        </p>
      )}
    </>
  );
}

/** URL, description and event types: only what changed is sent. */
function EditEndpoint({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: () => void }) {
  const [saved, setSaved] = useState(false);
  const form = useForm(
    async (data) => {
      setSaved(false);
      const url = String(data.get('url') ?? '').trim();
      const description = String(data.get('description') ?? '').trim() || null;
      const events = chosenEventTypes(data);
      await patch(`${WEBHOOKS}/${endpoint.id}`, {
        ...(url !== endpoint.url && { url }),
        ...(description !== endpoint.description && { description }),
        ...(events.join() !== endpoint.events.join() && { events }),
      });
      setSaved(true);
      onSaved();
    },
    ['url', 'description', 'events'],
  );
  return (
    <Section title="What it receives">
      <form onSubmit={form.submit} noValidate>
        <Field label="URL" error={form.errorFor('url')}>
          {(props) => <input {...props} name="url" type="url" defaultValue={endpoint.url} />}
        </Field>
        <Field label="Description (optional)" error={form.errorFor('description')}>
          {(props) => (
            <input {...props} name="description" maxLength={500} defaultValue={endpoint.description ?? ''} />
          )}
        </Field>
        <EventTypeChoices selected={endpoint.events} error={form.errorFor('events')} />
        <FormError form={form} />
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? 'Saving…' : 'Save changes'}
        </button>
        {saved && !form.error && (
          <p class="notice success" role="status">
            Saved: pending retries use the new values.
          </p>
        )}
      </form>
    </Section>
  );
}

function RotateSecret({ endpoint }: { endpoint: Endpoint }) {
  const [rotated, setRotated] = useState<{ secret: string; previousSecretExpiresAt: string | null }>();
  const rotate = useForm(
    async (data) => {
      const hours = String(data.get('overlapHours') ?? '').trim();
      setRotated(
        await post<{ secret: string; previousSecretExpiresAt: string | null }>(
          `${WEBHOOKS}/${endpoint.id}/rotate-secret`,
          hours === ''
            ? {}
            : { overlapSeconds: /^\d+(\.\d+)?$/.test(hours) ? Math.round(Number(hours) * 3600) : hours },
        ),
      );
    },
    ['overlapSeconds'],
  );
  return (
    <Section title="Rotate the signing secret">
      {rotated && <ShownOnce label={`New signing secret of ${endpoint.url}`} value={rotated.secret} />}
      <form onSubmit={rotate.submit} noValidate>
        <Field
          label="Keep the old secret signing for (hours)"
          hint="0 to 168; 24 when left empty. Both secrets sign until then, so your server can switch."
          error={rotate.errorFor('overlapSeconds')}
        >
          {(props) => <input {...props} name="overlapHours" inputMode="decimal" />}
        </Field>
        <FormError form={rotate} />
        <button type="submit" disabled={rotate.busy}>
          {rotate.busy ? 'Rotating…' : 'Rotate secret'}
        </button>
        {rotated && (
          <p role="status">
            {rotated.previousSecretExpiresAt ? (
              <>
                The old secret keeps signing until <Time iso={rotated.previousSecretExpiresAt} />.
              </>
            ) : (
              'The old secret stopped signing now.'
            )}
          </p>
        )}
      </form>
    </Section>
  );
}
