import { useState } from 'preact/hooks';
import { del, get, post, request } from '../../api';
import { Async, useLoad } from '../../components/async';
import { Address, Chain, Section, Time } from '../../components/bits';
import { Field, FormError, useForm } from '../../components/form';
import type { PaymasterClient } from './Clients';
import { PolicyDryRun } from './PolicyDryRun';
import { PolicyEditor, type PolicyBudget } from './PolicyEditor';

/** A client's sponsorship policy (docs/paymaster.md "Sponsorship policies (issue 43)"), as `/v1/paymaster/clients/{id}/policies` answers it. */
interface SponsorshipPolicy {
  id: string;
  name: string;
  position: number;
  chainIds: number[] | null;
  allowlist: { chainId: number; contractAddress: string; label: string | null }[] | null;
  startsAt: string | null;
  endsAt: string | null;
  budgets: PolicyBudget[];
  approvalWebhook: { url: string; timeoutMs: number; onError: 'deny' | 'allow' } | null;
}

const describeBudget = ({ kind, amount, period, scope }: SponsorshipPolicy['budgets'][number]) =>
  `${kind === 'usd' ? `${amount} USD` : `${amount} operations`} per ${period === 'lifetime' ? 'lifetime' : period}${scope === 'sender' ? ' per sender' : ''}`;

/** One policy: what it covers, its window, budgets and approval webhook. */
function PolicyRules({ policy }: { policy: SponsorshipPolicy }) {
  return (
    <>
      <strong>{policy.name}</strong> ·{' '}
      {policy.chainIds === null
        ? 'every chain of the client'
        : policy.chainIds.map((chainId) => <Chain key={chainId} id={chainId} />)}{' '}
      ·{' '}
      {policy.allowlist === null
        ? 'the shared allowlist'
        : policy.allowlist.map((entry) => (
            <Address key={entry.contractAddress} value={entry.contractAddress} />
          ))}
      {(policy.startsAt || policy.endsAt) && (
        <>
          {' '}
          · from <Time iso={policy.startsAt} /> until <Time iso={policy.endsAt} />
        </>
      )}
      {policy.budgets.length > 0 && <> · {policy.budgets.map(describeBudget).join(', ')}</>}
      {policy.approvalWebhook && <> · approval by {policy.approvalWebhook.url}</>}
    </>
  );
}

/** The new-policy form: a name, an optional window and an optional contract of its own. */
function NewPolicyForm({ clientId, onCreated }: { clientId: string; onCreated: () => void }) {
  const form = useForm(
    async (data) => {
      const text = (name: string) => String(data.get(name) ?? '').trim();
      const instant = (name: string) => (text(name) ? new Date(text(name)).toISOString() : null);
      const contract = text('contractAddress');
      await post(`/v1/paymaster/clients/${clientId}/policies`, {
        name: text('name'),
        startsAt: instant('startsAt'),
        endsAt: instant('endsAt'),
        ...(contract && { allowlist: [{ chainId: Number(text('chainId')), contractAddress: contract }] }),
      });
      (document.getElementById('policy-form') as HTMLFormElement | null)?.reset();
      onCreated();
    },
    ['name', 'startsAt', 'endsAt', 'allowlist.0.contractAddress', 'allowlist.0.chainId'],
  );
  return (
    <form id="policy-form" onSubmit={form.submit} noValidate>
      <Field label="Policy name" error={form.errorFor('name')}>
        {(props) => <input {...props} name="name" maxLength={100} required />}
      </Field>
      <Field label="Starts (optional)" error={form.errorFor('startsAt')}>
        {(props) => <input {...props} name="startsAt" type="datetime-local" />}
      </Field>
      <Field label="Ends (optional)" error={form.errorFor('endsAt')}>
        {(props) => <input {...props} name="endsAt" type="datetime-local" />}
      </Field>
      <Field
        label="Its own contract (optional)"
        hint="Empty: the shared allowlist above"
        error={form.errorFor('allowlist.0.contractAddress')}
      >
        {(props) => <input {...props} name="contractAddress" placeholder="0x…" />}
      </Field>
      <Field label="On chain id" error={form.errorFor('allowlist.0.chainId')}>
        {(props) => <input {...props} name="chainId" inputMode="numeric" placeholder="84532" />}
      </Field>
      <FormError form={form} />
      <button type="submit" disabled={form.busy}>
        Add policy
      </button>
    </form>
  );
}

/** One client's policies in the order they are tried, with move-up and delete. */
function ClientPolicies({ clientId }: { clientId: string }) {
  const policies = useLoad(() =>
    get<{ data: SponsorshipPolicy[] }>(`/v1/paymaster/clients/${clientId}/policies`),
  );
  const [error, setError] = useState<string>();
  const [editing, setEditing] = useState<string>();
  const act = async (action: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await action();
      policies.reload();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  const moveUp = (list: SponsorshipPolicy[], index: number) => {
    const ids = list.map((policy) => policy.id);
    [ids[index - 1], ids[index]] = [ids[index]!, ids[index - 1]!];
    return act(() => request('PUT', `/v1/paymaster/clients/${clientId}/policies/order`, { policyIds: ids }));
  };
  return (
    <>
      <Async
        state={policies}
        isEmpty={(result) => result.data.length === 0}
        empty="No policy: this client sponsors nothing."
      >
        {(result) => (
          <ol>
            {result.data.map((policy, index) => (
              <li key={policy.id}>
                <PolicyRules policy={policy} />{' '}
                {index > 0 && (
                  <button
                    type="button"
                    onClick={() => moveUp(result.data, index)}
                    aria-label={`Move up: ${policy.name}`}
                  >
                    Move up
                  </button>
                )}{' '}
                <button
                  type="button"
                  aria-expanded={editing === policy.id}
                  onClick={() => setEditing(editing === policy.id ? undefined : policy.id)}
                  aria-label={`Edit the window and budgets of ${policy.name}`}
                >
                  Window and budgets
                </button>{' '}
                <button
                  type="button"
                  class="danger"
                  onClick={() => act(() => del(`/v1/paymaster/clients/${clientId}/policies/${policy.id}`))}
                  aria-label={`Delete ${policy.name}`}
                >
                  Delete
                </button>
                {editing === policy.id && (
                  <PolicyEditor
                    clientId={clientId}
                    policy={policy}
                    onSaved={() => {
                      setEditing(undefined);
                      policies.reload();
                    }}
                  />
                )}
              </li>
            ))}
          </ol>
        )}
      </Async>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      <NewPolicyForm clientId={clientId} onCreated={policies.reload} />
      <PolicyDryRun clientId={clientId} />
    </>
  );
}

/**
 * Sponsorship policies of a chosen client: the first whose chains, window and allowlist pass sponsors
 * an operation (docs/paymaster.md).
 */
export function SponsorshipPolicies() {
  const clients = useLoad(() => get<{ data: PaymasterClient[] }>('/v1/paymaster/clients'));
  const [chosen, setChosen] = useState<string>();
  return (
    <Section title="Sponsorship policies">
      <p class="hint">
        Tried in order: the first whose chains, window and allowlist pass sponsors the operation.
      </p>
      <Async state={clients} isEmpty={(result) => result.data.length === 0} empty="Create a client first.">
        {(result) => {
          const clientId = chosen ?? result.data[0]!.id;
          return (
            <>
              <Field label="Client">
                {(props) => (
                  <select
                    {...props}
                    value={clientId}
                    onChange={(event) => setChosen((event.target as HTMLSelectElement).value)}
                  >
                    {result.data.map((client) => (
                      <option key={client.id} value={client.id}>
                        {client.label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <ClientPolicies key={clientId} clientId={clientId} />
            </>
          );
        }}
      </Async>
    </Section>
  );
}
