import { useState } from 'preact/hooks';
import { del, get, post } from '../api';
import { Async, useLoad } from '../components/async';
import { Section, ShownOnce, StatusBadge, Time } from '../components/bits';
import { Field, FormError, useForm } from '../components/form';

interface ApiKey {
  id: string;
  label: string | null;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export function ApiKeys() {
  const keys = useLoad(() => get<{ data: ApiKey[] }>('/v1/merchants/me/api-keys'));
  const [created, setCreated] = useState<{ label: string | null; rawKey: string }>();
  const [revokeError, setRevokeError] = useState<string>();
  const form = useForm(
    async (data) => {
      const label = String(data.get('label') ?? '').trim();
      const key = await post<{ label: string | null; rawKey: string }>(
        '/v1/merchants/me/api-keys',
        label ? { label } : {},
      );
      setCreated(key);
      (document.getElementById('api-key-form') as HTMLFormElement | null)?.reset();
      keys.reload();
    },
    ['label'],
  );
  const revoke = async (key: ApiKey) => {
    if (!confirm(`Revoke ${key.label ?? key.prefix}? Requests with it fail from now on.`)) return;
    setRevokeError(undefined);
    try {
      await del(`/v1/merchants/me/api-keys/${key.id}`);
      keys.reload();
    } catch (caught) {
      setRevokeError((caught as Error).message);
    }
  };
  return (
    <>
      <Section title="Create a secret key">
        <p class="muted">
          An <code>sk_</code> key creates payment sessions and manages webhooks from your server.
        </p>
        <form id="api-key-form" onSubmit={form.submit} noValidate>
          <Field label="Label" hint="What uses it, e.g. “shop backend”" error={form.errorFor('label')}>
            {(props) => <input {...props} name="label" maxLength={100} />}
          </Field>
          <FormError form={form} />
          <button type="submit" class="primary" disabled={form.busy}>
            {form.busy ? 'Creating…' : 'Create key'}
          </button>
        </form>
        {created && (
          <ShownOnce label={`New key${created.label ? ` “${created.label}”` : ''}`} value={created.rawKey} />
        )}
      </Section>
      <Section title="Keys">
        {revokeError && (
          <p class="field-error" role="alert">
            {revokeError}
          </p>
        )}
        <Async state={keys} isEmpty={(result) => result.data.length === 0} empty="No keys yet.">
          {(result) => (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Label</th>
                    <th>Key</th>
                    <th class="hide-narrow">Created</th>
                    <th class="hide-narrow">Last used</th>
                    <th>
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {result.data.map((key) => (
                    <tr key={key.id} data-testid={`api-key-${key.prefix}`}>
                      <td>{key.label ?? <span class="muted">no label</span>}</td>
                      <td>
                        <code>{key.prefix}…</code>
                      </td>
                      <td class="hide-narrow">
                        <Time iso={key.createdAt} />
                      </td>
                      <td class="hide-narrow">
                        <Time iso={key.lastUsedAt} />
                      </td>
                      <td>
                        {key.revokedAt ? (
                          <StatusBadge status="revoked" />
                        ) : (
                          <button
                            type="button"
                            class="danger"
                            onClick={() => revoke(key)}
                            aria-label={`Revoke ${key.label ?? key.prefix}`}
                          >
                            Revoke
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Async>
      </Section>
    </>
  );
}
