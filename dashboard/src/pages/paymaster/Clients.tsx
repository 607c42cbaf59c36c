import { useState } from 'preact/hooks';
import { del, get, post } from '../../api';
import { Async, useLoad } from '../../components/async';
import { Chain, CopyButton, Section, StatusBadge, Time } from '../../components/bits';
import { Field, FormError, useForm } from '../../components/form';
import { KNOWN_CHAINS } from '../../format';

export interface PaymasterClient {
  id: string;
  clientId: string;
  label: string;
  environment: 'live' | 'test';
  allowedOrigins: string[];
  allowedChainIds: number[];
  gasMode: string;
  createdAt: string;
  revokedAt: string | null;
}

/** One client: its label and environment, id to copy, chains, gas mode, and revoke (or revoked) with its creation time. */
function ClientRow({
  client,
  onRevoke,
}: {
  client: PaymasterClient;
  onRevoke: (client: PaymasterClient) => void;
}) {
  return (
    <tr>
      <td>
        {client.label} <span class="badge">{client.environment}</span>
      </td>
      <td>
        <code>{client.clientId}</code>
        <CopyButton text={client.clientId} />
      </td>
      <td class="hide-narrow">
        {client.allowedChainIds.map((id, index) => (
          <span key={id}>
            {index > 0 && ', '}
            <Chain id={id} />
          </span>
        ))}
      </td>
      <td class="hide-narrow">{client.gasMode.replace('_', ' ')}</td>
      <td>
        {client.revokedAt ? (
          <StatusBadge status="revoked" />
        ) : (
          <button
            type="button"
            class="danger"
            onClick={() => onRevoke(client)}
            aria-label={`Revoke ${client.label}`}
          >
            Revoke
          </button>
        )}
        <div class="muted">
          <Time iso={client.createdAt} />
        </div>
      </td>
    </tr>
  );
}

function ClientTable({
  clients,
  onRevoke,
}: {
  clients: PaymasterClient[];
  onRevoke: (client: PaymasterClient) => void;
}) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Label</th>
            <th>Client id</th>
            <th class="hide-narrow">Chains</th>
            <th class="hide-narrow">Gas</th>
            <th>
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {clients.map((client) => (
            <ClientRow key={client.id} client={client} onRevoke={onRevoke} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The new-client form: label, environment, chains, allowed origins and who pays gas. */
function NewClientForm({ onCreated }: { onCreated: () => void }) {
  const form = useForm(
    async (data) => {
      const origins = String(data.get('allowedOrigins') ?? '')
        .split(/[\s,]+/)
        .filter(Boolean);
      await post('/v1/paymaster/clients', {
        label: String(data.get('label') ?? '').trim(),
        environment: data.get('environment') === 'live' ? 'live' : 'test',
        allowedChainIds: KNOWN_CHAINS.filter((chain) => data.get(`chain-${chain.id}`) === 'on').map(
          (chain) => chain.id,
        ),
        allowedOrigins: origins,
        gasMode: String(data.get('gasMode') ?? 'sponsored'),
      });
      (document.getElementById('client-form') as HTMLFormElement | null)?.reset();
      onCreated();
    },
    ['label', 'environment', 'allowedChainIds', 'allowedOrigins', 'gasMode'],
  );
  return (
    <>
      <h3>New client</h3>
      <form id="client-form" onSubmit={form.submit} noValidate>
        <Field label="Label" error={form.errorFor('label')}>
          {(props) => <input {...props} name="label" maxLength={100} required />}
        </Field>
        <Field label="Environment" error={form.errorFor('environment')}>
          {(props) => (
            <select {...props} name="environment">
              <option value="test">test (testnets)</option>
              <option value="live">live (mainnets)</option>
            </select>
          )}
        </Field>
        <fieldset class="field">
          <legend>Chains</legend>
          {KNOWN_CHAINS.map((chain) => (
            <label key={chain.id} class="check">
              <input type="checkbox" name={`chain-${chain.id}`} /> {chain.name}
            </label>
          ))}
          {form.errorFor('allowedChainIds') && (
            <p class="field-error" role="alert">
              {form.errorFor('allowedChainIds')}
            </p>
          )}
        </fieldset>
        <Field
          label="Allowed origins (optional)"
          hint="Space or comma separated, e.g. https://app.example"
          error={form.errorFor('allowedOrigins')}
        >
          {(props) => <input {...props} name="allowedOrigins" />}
        </Field>
        <Field label="Who pays gas" error={form.errorFor('gasMode')}>
          {(props) => (
            <select {...props} name="gasMode">
              <option value="sponsored">sponsored (you pay)</option>
              <option value="user_paid">user paid (in ERC-20)</option>
              <option value="both">both</option>
            </select>
          )}
        </Field>
        <FormError form={form} />
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? 'Creating…' : 'Create client'}
        </button>
      </form>
    </>
  );
}

export function Clients() {
  const clients = useLoad(() => get<{ data: PaymasterClient[] }>('/v1/paymaster/clients'));
  const [actionError, setActionError] = useState<string>();
  const revoke = async (client: PaymasterClient) => {
    if (!confirm(`Revoke ${client.label}? Its client id stops working.`)) return;
    setActionError(undefined);
    try {
      await del(`/v1/paymaster/clients/${client.id}`);
      clients.reload();
    } catch (caught) {
      setActionError((caught as Error).message);
    }
  };
  return (
    <Section title="Clients">
      <Async
        state={clients}
        isEmpty={(result) => result.data.length === 0}
        empty="No clients yet: create one for your app."
      >
        {(result) => <ClientTable clients={result.data} onRevoke={revoke} />}
      </Async>
      {actionError && (
        <p class="field-error" role="alert">
          {actionError}
        </p>
      )}
      <NewClientForm onCreated={() => clients.reload()} />
    </Section>
  );
}
