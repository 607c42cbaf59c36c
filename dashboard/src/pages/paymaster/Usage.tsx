import { get } from '../../api';
import { Async, useLoad } from '../../components/async';
import { Address, Chain, Section, StatusBadge, Time } from '../../components/bits';
import { CategoryChart, daysBetween, DailyChart, type Category } from '../../components/chart';
import { chainName, formatUsd, formatWei, sumDecimals } from '../../format';

interface UsageRecord {
  id: string;
  clientId: string;
  chainId: number | null;
  mode: 'sponsored' | 'user_paid' | null;
  status: string;
  reason: string | null;
  sender: string | null;
  userOpHash: string | null;
  actualGasCost: string | null;
  createdAt: string;
}

interface Charge {
  chainId: number;
  amountUsd: string | null;
  createdAt: string;
}

interface Overview {
  counts: {
    total: number;
    denied: number;
    submitted: number;
    succeeded: number;
    reverted: number;
    dropped: number;
  };
  sponsored: { operations: number; gasSpentWei: string };
  gasSpentWei: string;
}

/** The most recent records read for the charts: enough for a month of a small app, bounded for the page. */
const CHART_ROWS = 100;

/** Sponsored operations and USD spent per day, from the newest usage records and gas charges. */
export function UsageChart() {
  const data = useLoad(() =>
    Promise.all([
      get<{ data: UsageRecord[] }>(`/v1/paymaster/usage?limit=${CHART_ROWS}&mode=sponsored`),
      get<{ data: Charge[] }>(`/v1/merchants/me/balance/charges?limit=${CHART_ROWS}`),
    ]),
  );
  return (
    <Async state={data}>
      {([usage, charges]) => {
        const signed = usage.data.filter((record) => !record.status.startsWith('denied'));
        const days = daysBetween([
          ...signed.map((record) => record.createdAt.slice(0, 10)),
          ...charges.data.map((charge) => charge.createdAt.slice(0, 10)),
        ]);
        const operations = days.map(
          (day) => signed.filter((record) => record.createdAt.startsWith(day)).length,
        );
        // Summed exactly as decimal strings; only the drawing turns them into numbers.
        const spent = days.map((day) =>
          sumDecimals(
            charges.data
              .filter((charge) => charge.createdAt.startsWith(day) && charge.amountUsd)
              .map((charge) => charge.amountUsd!),
          ),
        );
        const totalOps = operations.reduce((sum, value) => sum + value, 0);
        return (
          <div class="grid">
            <div>
              <h3>Sponsored operations per day</h3>
              <DailyChart
                days={days}
                valueLabel="operations"
                counts
                series={[{ label: 'sponsored operations', values: operations, color: '#1f4fd1' }]}
                summary={`${totalOps} sponsored operations over ${days.length} days`}
              />
            </div>
            <div>
              <h3>USD spent per day</h3>
              {charges.data.length === 0 ? (
                <div class="notice empty" data-testid="no-charges">
                  Nothing charged yet: operations on testnets are never charged, mainnet ones once included.
                </div>
              ) : (
                <DailyChart
                  days={days}
                  valueLabel="USD"
                  series={[{ label: 'USD spent', values: spent.map(Number), color: '#8a3fd1' }]}
                  summary={`${formatUsd(sumDecimals(spent.length ? spent : ['0']))} spent over ${days.length} days`}
                />
              )}
            </div>
          </div>
        );
      }}
    </Async>
  );
}

/** Counts by a key, largest first (ties by label, so the bars keep their place between loads). */
function countBy(records: UsageRecord[], keyOf: (record: UsageRecord) => string): Category[] {
  const counts = new Map<string, number>();
  for (const record of records) counts.set(keyOf(record), (counts.get(keyOf(record)) ?? 0) + 1);
  return [...counts]
    .map(([label, value]) => ({ label, value }))
    .sort((a, b) => b.value - a.value || a.label.localeCompare(b.label));
}

/**
 * Every usage record (signed operations and refusals alike) of the newest page, counted by chain
 * and by status: where sponsorship is used, and how much of it is refused or reverts.
 */
export function UsageBreakdown() {
  const usage = useLoad(() => get<{ data: UsageRecord[] }>(`/v1/paymaster/usage?limit=${CHART_ROWS}`));
  return (
    <Async state={usage}>
      {(result) => {
        const byChain = countBy(result.data, (record) =>
          record.chainId === null ? 'no chain' : chainName(record.chainId),
        );
        const byStatus = countBy(result.data, (record) => record.status.replace(/_/g, ' '));
        const total = result.data.length;
        const describe = (categories: Category[]) =>
          categories.map((category) => `${category.label}: ${category.value}`).join(', ');
        return (
          <div class="grid">
            <div>
              <h3>Operations by chain</h3>
              <CategoryChart
                categories={byChain}
                color="#0f7b6c"
                valueLabel="operations"
                summary={`The latest ${total} operations by chain: ${describe(byChain)}`}
              />
            </div>
            <div>
              <h3>Operations by status</h3>
              <CategoryChart
                categories={byStatus}
                color="#b5531c"
                valueLabel="operations"
                summary={`The latest ${total} operations by status: ${describe(byStatus)}`}
              />
            </div>
          </div>
        );
      }}
    </Async>
  );
}

export function Usage() {
  const overview = useLoad(() => get<Overview>('/v1/merchants/me/paymaster/overview?window=7d'));
  const usage = useLoad(() => get<{ data: UsageRecord[] }>('/v1/paymaster/usage?limit=20'));
  return (
    <Section title="Usage">
      <Async state={overview}>
        {(figures) => (
          <div class="stats">
            <div class="stat">
              <span class="value" data-testid="sponsored-ops">
                {figures.sponsored.operations}
              </span>{' '}
              sponsored operations (7 days)
            </div>
            <div class="stat">
              <span class="value">{figures.counts.denied}</span> refused
            </div>
            <div class="stat">
              <span class="value">{figures.counts.reverted}</span> reverted
            </div>
            <div class="stat">
              <span class="value">{formatWei(figures.gasSpentWei)}</span> gas spent
            </div>
          </div>
        )}
      </Async>
      <UsageChart />
      <UsageBreakdown />
      <h3>Recent operations</h3>
      <Async state={usage} isEmpty={(result) => result.data.length === 0} empty="No operations yet.">
        {(result) => (
          <div class="table-wrap">
            <table data-testid="usage-table">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Status</th>
                  <th class="hide-narrow">Chain</th>
                  <th>Sender</th>
                  <th class="hide-narrow num">Gas cost</th>
                </tr>
              </thead>
              <tbody>
                {result.data.map((record) => (
                  <tr key={record.id}>
                    <td>
                      <Time iso={record.createdAt} />
                    </td>
                    <td>
                      <StatusBadge status={record.status} />
                      {record.reason && <div class="muted">{record.reason}</div>}
                    </td>
                    <td class="hide-narrow">
                      {record.chainId !== null ? <Chain id={record.chainId} /> : '—'}
                    </td>
                    <td>{record.sender ? <Address value={record.sender} /> : '—'}</td>
                    <td class="hide-narrow num">
                      {record.actualGasCost ? formatWei(record.actualGasCost) : '—'}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Async>
    </Section>
  );
}
