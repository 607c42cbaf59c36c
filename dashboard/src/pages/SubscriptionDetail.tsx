import { useState } from 'preact/hooks';
import { get, post } from '../api';
import { Async, useLoad } from '../components/async';
import { Address, Chain, Section, StatusBadge, Time } from '../components/bits';
import { formatUsd } from '../format';
import { Link } from '../router';
import type { Page, Plan, SessionSummary, Subscription } from '../types';
import { planPeriod } from './Plans';

/**
 * One subscription (issue 42): its facts, its invoices (the period sessions, `subscriptionId` on each) and,
 * while it still charges, canceling at the end of the period or at once, each after a confirmation.
 */
export function SubscriptionDetail({ id }: { id: string }) {
  const loaded = useLoad(async () => {
    const subscription = await get<Subscription>(`/v1/merchants/me/subscriptions/${encodeURIComponent(id)}`);
    const [plan, invoices] = await Promise.all([
      get<Plan>(`/v1/merchants/me/plans/${subscription.planId}`),
      get<Page<SessionSummary>>(
        `/v1/merchants/me/sessions?${new URLSearchParams({ subscriptionId: subscription.id, limit: '100' })}`,
      ),
    ]);
    return { subscription, plan, invoices: invoices.data };
  }, [id]);
  const [cancelError, setCancelError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const cancel = async (atPeriodEnd: boolean) => {
    const question = atPeriodEnd
      ? 'Cancel at the end of the current period? No further period is charged.'
      : 'Cancel now? It ends at once and no further period is charged.';
    if (!confirm(question)) return;
    setCancelError(undefined);
    setBusy(true);
    try {
      await post(`/v1/merchants/me/subscriptions/${encodeURIComponent(id)}/cancel`, { atPeriodEnd });
      loaded.reload();
    } catch (caught) {
      setCancelError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };
  if (loaded.error?.status === 404) return <p>No subscription of yours has this id.</p>;
  return (
    <Async state={loaded}>
      {({ subscription, plan, invoices }) => (
        <>
          <Section title="Subscription">
            <SubscriptionFacts subscription={subscription} plan={plan} />
            {subscription.status !== 'canceled' && (
              <div class="actions">
                {!subscription.cancelAtPeriodEnd && (
                  <button type="button" disabled={busy} onClick={() => cancel(true)}>
                    Cancel at period end
                  </button>
                )}
                <button type="button" class="danger" disabled={busy} onClick={() => cancel(false)}>
                  Cancel now
                </button>
              </div>
            )}
            {cancelError && (
              <p class="field-error" role="alert">
                {cancelError}
              </p>
            )}
          </Section>
          <Invoices invoices={invoices} />
        </>
      )}
    </Async>
  );
}

function SubscriptionFacts({ subscription, plan }: { subscription: Subscription; plan: Plan }) {
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <StatusBadge status={subscription.status} />
        {subscription.cancelAtPeriodEnd && subscription.status !== 'canceled' && (
          <span class="muted"> ends at the period’s end</span>
        )}
      </dd>
      <dt>Plan</dt>
      <dd>
        {plan.name}: {formatUsd(plan.amount)} {planPeriod(plan)}
      </dd>
      <dt>Customer</dt>
      <dd>
        <Address value={subscription.customerAccount} />
      </dd>
      <dt>Paid in</dt>
      <dd>
        {subscription.token} on <Chain id={subscription.chainId} />
      </dd>
      <dt>Current period</dt>
      <dd>
        <Time iso={subscription.currentPeriodStart} /> to <Time iso={subscription.currentPeriodEnd} />
      </dd>
      {subscription.canceledAt && (
        <>
          <dt>Canceled</dt>
          <dd>
            <Time iso={subscription.canceledAt} />
          </dd>
        </>
      )}
    </dl>
  );
}

/** The period sessions, newest first: each links to its session page. */
function Invoices({ invoices }: { invoices: SessionSummary[] }) {
  return (
    <Section title="Invoices">
      {invoices.length === 0 ? (
        <p class="muted">No period charged yet.</p>
      ) : (
        <div class="table-wrap">
          <table data-testid="invoices-table">
            <thead>
              <tr>
                <th>Session</th>
                <th class="num">Amount</th>
                <th>Status</th>
                <th class="hide-narrow">Created</th>
              </tr>
            </thead>
            <tbody>
              {invoices.map((session) => (
                <tr key={session.id}>
                  <td>
                    <Link to={`/sessions/${session.id}`}>{session.id.slice(0, 8)}</Link>
                  </td>
                  <td class="num">{formatUsd(session.amount)}</td>
                  <td>
                    <StatusBadge status={session.status} />
                  </td>
                  <td class="hide-narrow">
                    <Time iso={session.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}
