import { useState } from 'preact/hooks';
import { patch } from '../../api';
import { Field, FormError, useForm } from '../../components/form';

/** A policy's budget as the API shows and takes it (docs/paymaster.md "Sponsorship policies (issue 43)"). */
export interface PolicyBudget {
  kind: 'usd' | 'operations';
  amount: string;
  period: 'day' | 'week' | 'month' | 'lifetime';
  scope: 'policy' | 'sender';
}

const PERIODS: PolicyBudget['period'][] = ['day', 'week', 'month', 'lifetime'];

/** An ISO instant as a datetime-local input shows it (the browser's time zone), or ''. */
function localInput(iso: string | null): string {
  if (!iso) return '';
  const at = new Date(iso);
  const two = (value: number) => String(value).padStart(2, '0');
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}T${two(at.getHours())}:${two(at.getMinutes())}`;
}

const value = (event: Event) => (event.target as HTMLInputElement | HTMLSelectElement).value;

/** One budget's kind, amount, period and scope, and its remove button. */
function BudgetFields({
  label,
  budget,
  onChange,
  onRemove,
}: {
  label: string;
  budget: PolicyBudget;
  onChange: (part: Partial<PolicyBudget>) => void;
  onRemove: () => void;
}) {
  return (
    <fieldset>
      <legend>{label}</legend>
      <Field label={`${label} kind`}>
        {(props) => (
          <select
            {...props}
            value={budget.kind}
            onChange={(event) => onChange({ kind: value(event) as PolicyBudget['kind'] })}
          >
            <option value="usd">USD</option>
            <option value="operations">operations</option>
          </select>
        )}
      </Field>
      <Field label={`${label} amount`}>
        {(props) => (
          <input
            {...props}
            inputMode="decimal"
            value={budget.amount}
            onInput={(event) => onChange({ amount: value(event) })}
          />
        )}
      </Field>
      <Field label={`${label} period`}>
        {(props) => (
          <select
            {...props}
            value={budget.period}
            onChange={(event) => onChange({ period: value(event) as PolicyBudget['period'] })}
          >
            {PERIODS.map((period) => (
              <option key={period} value={period}>
                {period === 'lifetime' ? 'lifetime' : `per ${period}`}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={`${label} scope`}>
        {(props) => (
          <select
            {...props}
            value={budget.scope}
            onChange={(event) => onChange({ scope: value(event) as PolicyBudget['scope'] })}
          >
            <option value="policy">whole policy</option>
            <option value="sender">per sender</option>
          </select>
        )}
      </Field>
      <button type="button" class="danger" onClick={onRemove}>
        Remove {label.toLowerCase()}
      </button>
    </fieldset>
  );
}

/**
 * A policy's window and budgets, edited in place: budgets added and removed in the form, saved in one
 * PATCH; the API's 400 lands beside the field it names (a window already ended, a negative amount…).
 */
export function PolicyEditor({
  clientId,
  policy,
  onSaved,
}: {
  clientId: string;
  policy: {
    id: string;
    name: string;
    startsAt: string | null;
    endsAt: string | null;
    budgets: PolicyBudget[];
  };
  onSaved: () => void;
}) {
  const [budgets, setBudgets] = useState<PolicyBudget[]>(policy.budgets);
  // The API names nested fields (budgets.0.amount); the form shows them under their top field.
  const fields = ['startsAt', 'endsAt', 'budgets'];
  const form = useForm(async (data) => {
    const instant = (name: string) => {
      const text = String(data.get(name) ?? '').trim();
      return text ? new Date(text).toISOString() : null;
    };
    await patch(`/v1/paymaster/clients/${clientId}/policies/${policy.id}`, {
      startsAt: instant('startsAt'),
      endsAt: instant('endsAt'),
      budgets,
    });
    onSaved();
  }, fields);
  const change = (index: number, part: Partial<PolicyBudget>) =>
    setBudgets(budgets.map((budget, at) => (at === index ? { ...budget, ...part } : budget)));

  return (
    <form onSubmit={form.submit} noValidate aria-label={`Window and budgets of ${policy.name}`}>
      <Field label="Starts" error={form.errorFor('startsAt')}>
        {(props) => (
          <input
            {...props}
            name="startsAt"
            type="datetime-local"
            defaultValue={localInput(policy.startsAt)}
          />
        )}
      </Field>
      <Field label="Ends" error={form.errorFor('endsAt')}>
        {(props) => (
          <input {...props} name="endsAt" type="datetime-local" defaultValue={localInput(policy.endsAt)} />
        )}
      </Field>
      {budgets.length === 0 && <p class="hint">No budget: only the client’s limits apply.</p>}
      {budgets.map((budget, index) => (
        <BudgetFields
          key={index}
          label={`Budget ${index + 1}`}
          budget={budget}
          onChange={(part) => change(index, part)}
          onRemove={() => setBudgets(budgets.filter((_budget, at) => at !== index))}
        />
      ))}
      {form.errorFor('budgets') && (
        <p class="field-error" role="alert">
          {form.errorFor('budgets')}
        </p>
      )}
      <button
        type="button"
        onClick={() => setBudgets([...budgets, { kind: 'usd', amount: '', period: 'day', scope: 'policy' }])}
      >
        Add budget
      </button>{' '}
      <FormError form={form} />
      <button type="submit" disabled={form.busy}>
        Save {policy.name}
      </button>
    </form>
  );
}
