import { get } from '../api';
import { Link } from '../router';
import { Async, useLoad } from '../components/async';
import { Section, StatusBadge, Time } from '../components/bits';
import { formatUsd, sumDecimals } from '../format';
import type { Page, SessionSummary } from '../types';
import { UsageChart } from './paymaster/Usage';

const DAY_MS = 24 * 3600 * 1000;

export function Overview() {
  const balance = useLoad(() => get<{ prepaidBalanceUsd: string }>('/v1/merchants/me/balance'));
  const completed = useLoad(() =>
    get<Page<SessionSummary>>('/v1/merchants/me/sessions?status=completed&limit=100'),
  );
  const recent = useLoad(() => get<Page<SessionSummary>>('/v1/merchants/me/sessions?limit=5'));
  return (
    <>
      <div class="stats">
        <div class="stat">
          <Async state={balance}>
            {(figures) => <span class="value">{formatUsd(figures.prepaidBalanceUsd)}</span>}
          </Async>
          prepaid gas balance
        </div>
        <div class="stat">
          <Async state={completed}>
            {(page) => {
              const since = Date.now() - DAY_MS;
              const day = page.data.filter(
                (session) => new Date(session.paidAt ?? session.createdAt).getTime() >= since,
              );
              return (
                <span class="value" data-testid="volume-24h">
                  {formatUsd(sumDecimals(['0', ...day.map((session) => session.amount)]))}
                </span>
              );
            }}
          </Async>
          completed in the last 24 h
        </div>
      </div>
      <Section title="Recent sessions" actions={<Link to="/sessions">All sessions</Link>}>
        <Async
          state={recent}
          isEmpty={(page) => page.data.length === 0}
          empty={
            <p>
              No sessions yet. <Link to="/payment-links/new">Create a payment link</Link>
            </p>
          }
        >
          {(page) => (
            <ul class="plain">
              {page.data.map((session) => (
                <li key={session.id}>
                  <Link to={`/sessions/${session.id}`}>{session.merchantName ?? session.id.slice(0, 8)}</Link>{' '}
                  · {formatUsd(session.amount)} · <StatusBadge status={session.status} /> ·{' '}
                  <Time iso={session.createdAt} />
                </li>
              ))}
            </ul>
          )}
        </Async>
      </Section>
      <Section title="Sponsored operations">
        <UsageChart />
      </Section>
    </>
  );
}
