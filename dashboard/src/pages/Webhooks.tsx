import { useState } from 'preact/hooks';
import { del, get, patch, post } from '../api';
import { Async, useLoad } from '../components/async';
import { Section, ShownOnce, StatusBadge, Time } from '../components/bits';
import { Field, FormError, useForm } from '../components/form';
import { DeliveryChart, Deliveries } from './WebhookDeliveries';

export interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
}

const BASE = '/v1/merchants/me/webhooks';

export function Webhooks() {
  const endpoints = useLoad(() => get<{ data: Endpoint[] }>(BASE));
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const form = useForm(
    async (data) => {
      const description = String(data.get('description') ?? '').trim();
      const created = await post<Endpoint & { secret: string }>(BASE, {
        url: String(data.get('url') ?? '').trim(),
        ...(description ? { description } : {}),
      });
      setSecret({ label: `Signing secret of ${created.url}`, value: created.secret });
      (document.getElementById('endpoint-form') as HTMLFormElement | null)?.reset();
      endpoints.reload();
    },
    ['url', 'description'],
  );
  return (
    <>
      <Section title="Add an endpoint">
        <form id="endpoint-form" onSubmit={form.submit} noValidate>
          <Field
            label="URL"
            hint="https, public; it receives signed session.confirming events"
            error={form.errorFor('url')}
          >
            {(props) => <input {...props} name="url" type="url" required />}
          </Field>
          <Field label="Description (optional)" error={form.errorFor('description')}>
            {(props) => <input {...props} name="description" maxLength={500} />}
          </Field>
          <FormError form={form} />
          <button type="submit" class="primary" disabled={form.busy}>
            {form.busy ? 'Adding…' : 'Add endpoint'}
          </button>
        </form>
      </Section>
      {secret && <ShownOnce label={secret.label} value={secret.value} />}
      <Async
        state={endpoints}
        isEmpty={(result) => result.data.length === 0}
        empty="No endpoints yet: add one to be told when a payment arrives."
      >
        {(result) => (
          <>
            {result.data.map((endpoint) => (
              <EndpointCard
                key={endpoint.id}
                endpoint={endpoint}
                onChange={endpoints.reload}
                onSecret={(value) => setSecret({ label: `New signing secret of ${endpoint.url}`, value })}
              />
            ))}
          </>
        )}
      </Async>
    </>
  );
}

function EndpointCard({
  endpoint,
  onChange,
  onSecret,
}: {
  endpoint: Endpoint;
  onChange: () => void;
  onSecret: (secret: string) => void;
}) {
  const [actionError, setActionError] = useState<string>();
  const [rotated, setRotated] = useState<string | null>();
  const rotate = useForm(
    async (data) => {
      const hours = String(data.get('overlapHours') ?? '').trim();
      const result = await post<{ secret: string; previousSecretExpiresAt: string | null }>(
        `${BASE}/${endpoint.id}/rotate-secret`,
        hours === ''
          ? {}
          : { overlapSeconds: /^\d+(\.\d+)?$/.test(hours) ? Math.round(Number(hours) * 3600) : hours },
      );
      setRotated(result.previousSecretExpiresAt);
      onSecret(result.secret);
    },
    ['overlapSeconds'],
  );
  const act = async (run: () => Promise<unknown>) => {
    setActionError(undefined);
    try {
      await run();
      onChange();
    } catch (caught) {
      setActionError((caught as Error).message);
    }
  };
  return (
    <Section
      title={endpoint.description ?? endpoint.url}
      actions={
        <StatusBadge
          status={endpoint.enabled ? 'enabled' : endpoint.disabledReason ? 'failed' : 'disabled'}
        />
      }
    >
      <p>
        <code>{endpoint.url}</code>
      </p>
      <p class="muted">
        Events: {endpoint.events.join(', ')} · added <Time iso={endpoint.createdAt} />
      </p>
      <div class="actions">
        <button
          type="button"
          onClick={() => act(() => patch(`${BASE}/${endpoint.id}`, { enabled: !endpoint.enabled }))}
        >
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </button>
        <button
          type="button"
          class="danger"
          onClick={() =>
            confirm(`Delete ${endpoint.url} and its delivery history?`) &&
            act(() => del(`${BASE}/${endpoint.id}`))
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
      <h3>Rotate the signing secret</h3>
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
        {rotated !== undefined && (
          <p role="status">
            {rotated ? (
              <>
                The old secret keeps signing until <Time iso={rotated} />.
              </>
            ) : (
              'The old secret stopped signing now.'
            )}
          </p>
        )}
      </form>
      <h3>Deliveries</h3>
      <DeliveryChart endpointId={endpoint.id} />
      <Deliveries endpointId={endpoint.id} />
    </Section>
  );
}
