import { useState } from 'preact/hooks';
import { del, get, post } from '../../api';
import { Async, useLoad } from '../../components/async';
import { Address, Chain, Section } from '../../components/bits';
import { Field, FormError, useForm } from '../../components/form';
import { KNOWN_CHAINS } from '../../format';

interface AllowlistEntry {
  id: string;
  chainId: number;
  contractAddress: string;
  label: string | null;
}

interface DenyRule {
  id: string;
  chainId: number;
  kind: 'sender' | 'target';
  address: string;
  label: string | null;
}

function ChainSelect({ error, name = 'chainId' }: { error?: string; name?: string }) {
  return (
    <Field label="Chain" error={error}>
      {(props) => (
        <select {...props} name={name}>
          {KNOWN_CHAINS.map((chain) => (
            <option key={chain.id} value={chain.id}>
              {chain.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

function useRemove(path: string, reload: () => void) {
  const [error, setError] = useState<string>();
  const remove = async (id: string) => {
    setError(undefined);
    try {
      await del(`${path}/${id}`);
      reload();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return { error, remove };
}

export function Allowlist() {
  const entries = useLoad(() => get<{ data: AllowlistEntry[] }>('/v1/paymaster/allowlist'));
  const removal = useRemove('/v1/paymaster/allowlist', entries.reload);
  const form = useForm(
    async (data) => {
      const label = String(data.get('label') ?? '').trim();
      await post('/v1/paymaster/allowlist', {
        chainId: Number(data.get('chainId')),
        contractAddress: String(data.get('contractAddress') ?? '').trim(),
        ...(label ? { label } : {}),
      });
      (document.getElementById('allowlist-form') as HTMLFormElement | null)?.reset();
      entries.reload();
    },
    ['chainId', 'contractAddress', 'label'],
  );
  return (
    <Section title="Allowlist (contracts sponsored)">
      <Async
        state={entries}
        isEmpty={(result) => result.data.length === 0}
        empty="No contract is allowed yet: nothing is sponsored."
      >
        {(result) => (
          <ul class="plain">
            {result.data.map((entry) => (
              <li key={entry.id}>
                <Chain id={entry.chainId} /> · <Address value={entry.contractAddress} />{' '}
                {entry.label && <span>{entry.label}</span>}{' '}
                <button
                  type="button"
                  class="danger"
                  onClick={() => removal.remove(entry.id)}
                  aria-label={`Remove ${entry.contractAddress}`}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
      </Async>
      {removal.error && (
        <p class="field-error" role="alert">
          {removal.error}
        </p>
      )}
      <form id="allowlist-form" onSubmit={form.submit} noValidate>
        <ChainSelect error={form.errorFor('chainId')} />
        <Field label="Contract address" error={form.errorFor('contractAddress')}>
          {(props) => <input {...props} name="contractAddress" placeholder="0x…" />}
        </Field>
        <Field label="Label (optional)" error={form.errorFor('label')}>
          {(props) => <input {...props} name="label" maxLength={100} />}
        </Field>
        <FormError form={form} />
        <button type="submit" disabled={form.busy}>
          Allow contract
        </button>
      </form>
    </Section>
  );
}

export function DenyRules() {
  const rules = useLoad(() => get<{ data: DenyRule[] }>('/v1/paymaster/deny-rules'));
  const removal = useRemove('/v1/paymaster/deny-rules', rules.reload);
  const form = useForm(
    async (data) => {
      const label = String(data.get('label') ?? '').trim();
      await post('/v1/paymaster/deny-rules', {
        chainId: Number(data.get('chainId')),
        kind: String(data.get('kind')),
        address: String(data.get('address') ?? '').trim(),
        ...(label ? { label } : {}),
      });
      (document.getElementById('deny-form') as HTMLFormElement | null)?.reset();
      rules.reload();
    },
    ['chainId', 'kind', 'address', 'label'],
  );
  return (
    <Section title="Deny rules">
      <Async state={rules} isEmpty={(result) => result.data.length === 0} empty="No deny rules.">
        {(result) => (
          <ul class="plain">
            {result.data.map((rule) => (
              <li key={rule.id}>
                <Chain id={rule.chainId} /> · {rule.kind} <Address value={rule.address} /> {rule.label}{' '}
                <button
                  type="button"
                  class="danger"
                  onClick={() => removal.remove(rule.id)}
                  aria-label={`Remove rule for ${rule.address}`}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
      </Async>
      {removal.error && (
        <p class="field-error" role="alert">
          {removal.error}
        </p>
      )}
      <form id="deny-form" onSubmit={form.submit} noValidate>
        <ChainSelect error={form.errorFor('chainId')} />
        <Field label="Refuse operations whose" error={form.errorFor('kind')}>
          {(props) => (
            <select {...props} name="kind">
              <option value="sender">sender is</option>
              <option value="target">call target is</option>
            </select>
          )}
        </Field>
        <Field label="Address" error={form.errorFor('address')}>
          {(props) => <input {...props} name="address" placeholder="0x…" />}
        </Field>
        <Field label="Label (optional)" error={form.errorFor('label')}>
          {(props) => <input {...props} name="label" maxLength={100} />}
        </Field>
        <FormError form={form} />
        <button type="submit" disabled={form.busy}>
          Add deny rule
        </button>
      </form>
    </Section>
  );
}
