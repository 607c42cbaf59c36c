import { download, get } from '../api';
import { Async, useLoad } from '../components/async';
import { Section, StatusBadge, Time } from '../components/bits';
import { FormError, UtcDateRangeFields, useForm } from '../components/form';
import { formatUsd } from '../format';
import { Link, navigate, useLocation } from '../router';
import type { Page, SessionSummary } from '../types';
import { SESSION_STATUSES } from '../../../db/sessionStatus';

const PAGE_SIZE = 20;

/**
 * The payments export: the merchant's sessions of a UTC date range as CSV, fetched with the token
 * (`download`: a link cannot carry it) and handed to the browser as a file.
 */
function SessionsExport() {
  const csv = useForm(
    async (data) => {
      const from = String(data.get('from'));
      const to = String(data.get('to'));
      await download(
        `/v1/merchants/me/sessions/export?${new URLSearchParams({ from, to, format: 'csv' })}`,
        `sessions-${from}-${to}.csv`,
      );
    },
    ['from', 'to'],
  );
  return (
    <Section title="Export">
      <form onSubmit={csv.submit} noValidate>
        <UtcDateRangeFields form={csv} />
        <FormError form={csv} />
        <div class="actions">
          <button type="submit" disabled={csv.busy} data-testid="sessions-export">
            Download sessions CSV
          </button>
        </div>
      </form>
    </Section>
  );
}

export function Sessions() {
  const { query } = useLocation();
  const status = query.get('status') ?? '';
  const page = Math.max(1, Number(query.get('page') ?? '1') || 1);
  const sessions = useLoad(
    () =>
      get<Page<SessionSummary>>(
        `/v1/merchants/me/sessions?${new URLSearchParams({ limit: String(PAGE_SIZE), page: String(page), ...(status ? { status } : {}) })}`,
      ),
    [status, page],
  );
  const go = (next: { status?: string; page?: number }) => {
    const params = new URLSearchParams();
    const nextStatus = next.status ?? status;
    if (nextStatus) params.set('status', nextStatus);
    if ((next.page ?? 1) > 1) params.set('page', String(next.page));
    navigate(`/sessions${params.toString() ? `?${params}` : ''}`);
  };
  return (
    <>
      <div class="filters" role="group" aria-label="Filter by status">
        <button type="button" aria-pressed={status === ''} onClick={() => go({ status: '' })}>
          All
        </button>
        {SESSION_STATUSES.map((value) => (
          <button
            type="button"
            key={value}
            aria-pressed={status === value}
            onClick={() => go({ status: value })}
          >
            {value.replace(/_/g, ' ')}
          </button>
        ))}
      </div>
      <Async
        state={sessions}
        isEmpty={(result) => result.data.length === 0}
        empty={
          <p>
            {status ? `No ${status.replace(/_/g, ' ')} sessions.` : 'No sessions yet.'}{' '}
            <Link to="/payment-links/new">Create a payment link</Link>
          </p>
        }
      >
        {(result) => (
          <>
            <div class="table-wrap">
              <table>
                <caption class="muted">
                  {result.total} session{result.total === 1 ? '' : 's'}
                  {status ? ` ${status.replace(/_/g, ' ')}` : ''}
                </caption>
                <thead>
                  <tr>
                    <th>Session</th>
                    <th class="num">Amount</th>
                    <th>Status</th>
                    <th class="hide-narrow">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {result.data.map((session) => (
                    <tr key={session.id}>
                      <td>
                        <Link to={`/sessions/${session.id}`}>
                          {session.merchantName ?? session.id.slice(0, 8)}
                        </Link>
                        {session.sandboxMode && <span class="badge"> test</span>}
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
            <div class="actions">
              <button type="button" disabled={page <= 1} onClick={() => go({ page: page - 1 })}>
                Newer
              </button>
              <button
                type="button"
                disabled={page * PAGE_SIZE >= (result.total ?? 0)}
                onClick={() => go({ page: page + 1 })}
              >
                Older
              </button>
            </div>
          </>
        )}
      </Async>
      <SessionsExport />
    </>
  );
}
