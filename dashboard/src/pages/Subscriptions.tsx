import { get } from '../api';
import { Async, useLoad } from '../components/async';
import { Chain, StatusBadge, Time } from '../components/bits';
import { formatUsd, shortAddress } from '../format';
import { Link, navigate, useLocation } from '../router';
import type { Plan, Subscription, SubscriptionStatus } from '../types';
import { planPeriod } from './Plans';

/** The subscription states (docs/service-contract.md), in the order a subscription meets them. */
export const SUBSCRIPTION_STATUSES: readonly SubscriptionStatus[] = [
  'trialing',
  'active',
  'past_due',
  'canceled',
];

/** The merchant's subscriptions, newest first, filtered by status (and by plan from the plans page). */
export function Subscriptions() {
  const { query } = useLocation();
  const status = query.get('status') ?? '';
  const planId = query.get('planId') ?? '';
  const loaded = useLoad(async () => {
    const filter = new URLSearchParams({ ...(status ? { status } : {}), ...(planId ? { planId } : {}) });
    const [subscriptions, plans] = await Promise.all([
      get<{ data: Subscription[] }>(`/v1/merchants/me/subscriptions?${filter}`),
      get<{ data: Plan[] }>('/v1/merchants/me/plans'),
    ]);
    return { subscriptions: subscriptions.data, plans: new Map(plans.data.map((plan) => [plan.id, plan])) };
  }, [status, planId]);
  const go = (nextStatus: string) => {
    const params = new URLSearchParams();
    if (nextStatus) params.set('status', nextStatus);
    if (planId) params.set('planId', planId);
    navigate(`/subscriptions${params.toString() ? `?${params}` : ''}`);
  };
  const planName = loaded.data?.plans.get(planId)?.name;
  return (
    <>
      {planId && (
        <p>
          Subscribers of <strong>{planName ?? 'one plan'}</strong>.{' '}
          <Link to={`/subscriptions${status ? `?status=${status}` : ''}`}>Show every plan</Link>
        </p>
      )}
      <div class="filters" role="group" aria-label="Filter by status">
        <button type="button" aria-pressed={status === ''} onClick={() => go('')}>
          All
        </button>
        {SUBSCRIPTION_STATUSES.map((value) => (
          <button type="button" key={value} aria-pressed={status === value} onClick={() => go(value)}>
            {value.replace(/_/g, ' ')}
          </button>
        ))}
      </div>
      <Async
        state={loaded}
        isEmpty={(result) => result.subscriptions.length === 0}
        empty={
          <p>
            {status ? `No ${status.replace(/_/g, ' ')} subscriptions.` : 'No subscriptions yet.'}{' '}
            <Link to="/plans">Plans and their subscribe links</Link>
          </p>
        }
      >
        {(result) => (
          <div class="table-wrap">
            <table data-testid="subscriptions-table">
              <caption class="muted">
                {result.subscriptions.length} subscription{result.subscriptions.length === 1 ? '' : 's'}
                {status ? ` ${status.replace(/_/g, ' ')}` : ''}
              </caption>
              <thead>
                <tr>
                  <th>Customer</th>
                  <th>Plan</th>
                  <th>Status</th>
                  <th class="hide-narrow">Network</th>
                  <th class="hide-narrow">Period ends</th>
                </tr>
              </thead>
              <tbody>
                {result.subscriptions.map((subscription) => {
                  const plan = result.plans.get(subscription.planId);
                  return (
                    <tr key={subscription.id}>
                      <td>
                        <Link to={`/subscriptions/${subscription.id}`}>
                          <code>{shortAddress(subscription.customerAccount)}</code>
                        </Link>
                      </td>
                      <td>
                        {plan ? (
                          <>
                            {plan.name}{' '}
                            <span class="muted hide-narrow">
                              {formatUsd(plan.amount)} {planPeriod(plan)}
                            </span>
                          </>
                        ) : (
                          <span class="muted">unknown plan</span>
                        )}
                      </td>
                      <td>
                        <StatusBadge status={subscription.status} />
                        {subscription.cancelAtPeriodEnd && subscription.status !== 'canceled' && (
                          <span class="muted"> ends at period end</span>
                        )}
                      </td>
                      <td class="hide-narrow">
                        {subscription.token} on <Chain id={subscription.chainId} />
                      </td>
                      <td class="hide-narrow">
                        <Time iso={subscription.currentPeriodEnd} />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </Async>
    </>
  );
}
