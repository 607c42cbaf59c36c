import { useState } from 'preact/hooks';
import { get, post } from '../api';
import { Async, useLoad, type Loaded } from '../components/async';
import { CopyButton, Section, StatusBadge, Time } from '../components/bits';
import { Field, FormError, useForm } from '../components/form';
import { formatUsd } from '../format';
import { Link } from '../router';
import type { Plan } from '../types';

/** `every month`, `every 3 weeks`: a plan's period as the merchant set it. */
export function planPeriod(plan: Pick<Plan, 'interval' | 'intervalCount'>): string {
  return plan.intervalCount === 1
    ? `every ${plan.interval}`
    : `every ${plan.intervalCount} ${plan.interval}s`;
}

/** An optional whole-number field: absent when left empty (the API's default), else the number typed. */
const wholeNumber = (value: FormDataEntryValue | null) =>
  value === null || String(value).trim() === '' ? undefined : Number(value);

/**
 * Subscription plans (issue 42): create one (name, USD amount per period, interval and count, trial days),
 * list them with the subscribe link customers open (copy), archive one (no new subscriber; its
 * subscriptions keep charging) after a confirmation.
 */
export function Plans() {
  const plans = useLoad(() => get<{ data: Plan[] }>('/v1/merchants/me/plans'));
  return (
    <>
      <CreatePlan onCreated={plans.reload} />
      <PlanList plans={plans} />
    </>
  );
}

function CreatePlan({ onCreated }: { onCreated: () => void }) {
  const [created, setCreated] = useState<Plan>();
  const form = useForm(
    async (data) => {
      const plan = await post<Plan>('/v1/merchants/me/plans', {
        name: String(data.get('name') ?? ''),
        amount: String(data.get('amount') ?? '').trim(),
        interval: String(data.get('interval') ?? 'month'),
        intervalCount: wholeNumber(data.get('intervalCount')),
        trialDays: wholeNumber(data.get('trialDays')),
      });
      setCreated(plan);
      (document.getElementById('plan-form') as HTMLFormElement | null)?.reset();
      onCreated();
    },
    ['name', 'amount', 'interval', 'intervalCount', 'trialDays'],
  );
  return (
    <Section title="Create a plan">
      <p class="muted">
        Customers subscribe from the plan’s link: their wallet allows exactly this amount each period, in the
        stablecoin and on the network they choose.
      </p>
      <form id="plan-form" onSubmit={form.submit} noValidate>
        <div class="grid">
          <Field label="Name" error={form.errorFor('name')}>
            {(props) => <input {...props} name="name" maxLength={200} />}
          </Field>
          <Field label="Amount per period (USD)" error={form.errorFor('amount')}>
            {(props) => <input {...props} name="amount" inputMode="decimal" placeholder="10.00" />}
          </Field>
          <Field label="Interval" error={form.errorFor('interval')}>
            {(props) => (
              <select {...props} name="interval">
                <option value="day">Day</option>
                <option value="week">Week</option>
                {/* Preact's select takes no defaultValue: the month is the option selected at first. */}
                <option value="month" selected>
                  Month (30 days)
                </option>
              </select>
            )}
          </Field>
          <Field label="Intervals per period" hint="1 to 12" error={form.errorFor('intervalCount')}>
            {(props) => (
              <input {...props} name="intervalCount" type="number" min={1} max={12} defaultValue="1" />
            )}
          </Field>
          <Field label="Trial days" hint="0 to 90" error={form.errorFor('trialDays')}>
            {(props) => <input {...props} name="trialDays" type="number" min={0} max={90} defaultValue="0" />}
          </Field>
        </div>
        <FormError form={form} />
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? 'Creating…' : 'Create plan'}
        </button>
      </form>
      {created && (
        <div class="notice success" role="status" data-testid="plan-created">
          <p>
            <strong>{created.name}</strong> created. Its subscribe link: <code>{created.subscribeUrl}</code>
            <CopyButton text={created.subscribeUrl} label="Copy link" />
          </p>
        </div>
      )}
    </Section>
  );
}

function PlanList({ plans }: { plans: Loaded<{ data: Plan[] }> }) {
  const [archiveError, setArchiveError] = useState<string>();
  const archive = async (plan: Plan) => {
    if (!confirm(`Archive ${plan.name}? It takes no new subscriber; its subscriptions keep charging.`))
      return;
    setArchiveError(undefined);
    try {
      await post(`/v1/merchants/me/plans/${plan.id}/archive`);
      plans.reload();
    } catch (caught) {
      setArchiveError((caught as Error).message);
    }
  };
  return (
    <Section title="Plans">
      {archiveError && (
        <p class="field-error" role="alert">
          {archiveError}
        </p>
      )}
      <Async state={plans} isEmpty={(result) => result.data.length === 0} empty="No plans yet.">
        {(result) => (
          <div class="table-wrap">
            <table data-testid="plans-table">
              <thead>
                <tr>
                  <th>Plan</th>
                  <th class="num">Amount</th>
                  <th class="hide-narrow">Trial</th>
                  <th class="hide-narrow">Created</th>
                  <th>Actions</th>
                </tr>
              </thead>
              <tbody>
                {result.data.map((plan) => (
                  <PlanRow key={plan.id} plan={plan} onArchive={() => archive(plan)} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Async>
    </Section>
  );
}

function PlanRow({ plan, onArchive }: { plan: Plan; onArchive: () => void }) {
  return (
    <tr data-testid={`plan-${plan.id}`}>
      <td>
        <Link to={`/subscriptions?planId=${plan.id}`}>{plan.name}</Link>
      </td>
      <td class="num">
        {formatUsd(plan.amount)} <span class="muted">{planPeriod(plan)}</span>
      </td>
      <td class="hide-narrow">{plan.trialDays > 0 ? `${plan.trialDays} days` : 'none'}</td>
      <td class="hide-narrow">
        <Time iso={plan.createdAt} />
      </td>
      <td>
        <div class="actions">
          <CopyButton text={plan.subscribeUrl} label="Copy link" />
          {plan.archived ? (
            <StatusBadge status="archived" />
          ) : (
            <button type="button" class="danger" onClick={onArchive} aria-label={`Archive ${plan.name}`}>
              Archive
            </button>
          )}
        </div>
      </td>
    </tr>
  );
}
