import { useState } from 'preact/hooks';
import { DEFAULT_WEBHOOK_EVENTS } from '../../../webhooks/eventTypes';
import { get, post } from '../api';
import { Link } from '../router';
import { Async, useLoad } from '../components/async';
import { Section, ShownOnce, StatusBadge, Time } from '../components/bits';
import { chosenEventTypes, EventTypeChoices, EventTypeList } from '../components/eventTypes';
import { Field, FormError, useForm } from '../components/form';
import { endpointStatus, SendTestEvent, WEBHOOKS } from '../components/webhookEndpoint';
import type { WebhookEndpoint as Endpoint } from '../types';

export function Webhooks() {
  const endpoints = useLoad(() => get<{ data: Endpoint[] }>(WEBHOOKS));
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const form = useForm(
    async (data) => {
      const description = String(data.get('description') ?? '').trim();
      const created = await post<Endpoint & { secret: string }>(WEBHOOKS, {
        url: String(data.get('url') ?? '').trim(),
        events: chosenEventTypes(data),
        ...(description ? { description } : {}),
      });
      setSecret({ label: `Signing secret of ${created.url}`, value: created.secret });
      (document.getElementById('endpoint-form') as HTMLFormElement | null)?.reset();
      endpoints.reload();
    },
    ['url', 'description', 'events'],
  );
  return (
    <>
      <Section title="Add an endpoint">
        <form id="endpoint-form" onSubmit={form.submit} noValidate>
          <Field
            label="URL"
            hint="https, public; it receives the event types ticked below, signed with its secret"
            error={form.errorFor('url')}
          >
            {(props) => <input {...props} name="url" type="url" required />}
          </Field>
          <Field label="Description (optional)" error={form.errorFor('description')}>
            {(props) => <input {...props} name="description" maxLength={500} />}
          </Field>
          <EventTypeChoices selected={DEFAULT_WEBHOOK_EVENTS} error={form.errorFor('events')} />
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
          <Section title="Endpoints">
            <ul class="endpoints">
              {result.data.map((endpoint) => (
                <EndpointRow key={endpoint.id} endpoint={endpoint} />
              ))}
            </ul>
          </Section>
        )}
      </Async>
    </>
  );
}

/** One endpoint: where it sends, what it receives, its state; its page has the rest. */
function EndpointRow({ endpoint }: { endpoint: Endpoint }) {
  return (
    <li data-testid="endpoint">
      <div class="endpoint-head">
        <Link to={`/webhooks/${endpoint.id}`}>{endpoint.description ?? endpoint.url}</Link>
        <StatusBadge status={endpointStatus(endpoint)} />
      </div>
      <p>
        <code>{endpoint.url}</code>{' '}
        <span class="muted">
          · added <Time iso={endpoint.createdAt} />
        </span>
      </p>
      <EventTypeList types={endpoint.events} />
      <SendTestEvent
        endpoint={endpoint}
        sent={() => (
          <>
            Its delivery is on <Link to={`/webhooks/${endpoint.id}`}>the endpoint’s page</Link>.
          </>
        )}
      />
    </li>
  );
}
