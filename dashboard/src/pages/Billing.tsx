import { useState } from 'preact/hooks';
import { download, get, post } from '../api';
import { Async, useLoad } from '../components/async';
import { Chain, Section, StatusBadge, Time } from '../components/bits';
import { daysBetween, DailyChart } from '../components/chart';
import { Field, FormError, UtcDateRangeFields, useForm, utcDay } from '../components/form';
import { formatUsd, sumDecimals } from '../format';

interface Summary {
  prepaidBalanceUsd: string;
  markupBps: number;
  currentPeriod: { start: string; end: string; chargesUsd: string; operations: number };
}

interface Charge {
  id: string;
  chainId: number;
  clientLabel: string | null;
  userOpHash: string;
  operationStatus: string;
  amountUsd: string | null;
  createdAt: string;
}

interface Topup {
  id: string;
  sessionId: string;
  paymentUrl: string;
  amount: string;
  creditedAmount: string;
  status: string;
  createdAt: string;
}

/**
 * The prepaid balance drawn back through time: today's balance minus what arrived since, plus what was
 * charged since, day by day (exact decimal sums; numbers only for drawing).
 */
function balanceByDay(
  balance: string,
  charges: Charge[],
  topups: Topup[],
): { days: string[]; values: number[] } {
  const days = daysBetween([
    utcDay(new Date()),
    ...charges.map((charge) => charge.createdAt.slice(0, 10)),
    ...topups.filter((topup) => topup.status === 'credited').map((topup) => topup.createdAt.slice(0, 10)),
  ]);
  const values = days.map((day) => {
    const later = (iso: string) => iso.slice(0, 10) > day;
    const chargedLater = charges
      .filter((charge) => later(charge.createdAt) && charge.amountUsd)
      .map((charge) => charge.amountUsd!);
    const creditedLater = topups
      .filter((topup) => later(topup.createdAt))
      .map((topup) => topup.creditedAmount);
    return Number(sumDecimals([balance, ...chargedLater, ...creditedLater.map((amount) => `-${amount}`)]));
  });
  return { days, values };
}

export function Billing() {
  const summary = useLoad(() => get<Summary>('/v1/merchants/me/balance'));
  const charges = useLoad(() => get<{ data: Charge[] }>('/v1/merchants/me/balance/charges?limit=100'));
  const topups = useLoad(() => get<{ data: Topup[] }>('/v1/merchants/me/balance/topups'));
  return (
    <>
      <Async state={summary}>
        {(figures) => (
          <div class="stats">
            <div class="stat">
              <span class="value" data-testid="balance">
                {formatUsd(figures.prepaidBalanceUsd)}
              </span>{' '}
              prepaid balance
            </div>
            <div class="stat">
              <span class="value">{formatUsd(figures.currentPeriod.chargesUsd)}</span> charged this month (
              {figures.currentPeriod.operations} operations)
            </div>
            <div class="stat">
              <span class="value">{(figures.markupBps / 100).toFixed(2)}%</span> markup on gas
            </div>
          </div>
        )}
      </Async>
      {summary.data && charges.data && topups.data && (
        <Section title="Balance over time">
          <BalanceChart
            balance={summary.data.prepaidBalanceUsd}
            charges={charges.data.data}
            topups={topups.data.data}
          />
        </Section>
      )}
      <TopUp onCreated={topups.reload} />
      <Section title="Top-ups">
        <Async state={topups} isEmpty={(result) => result.data.length === 0} empty="No top-ups yet.">
          {(result) => (
            <ul class="plain">
              {result.data.map((topup) => (
                <li key={topup.id}>
                  <StatusBadge status={topup.status} /> {formatUsd(topup.amount)} ·{' '}
                  <Time iso={topup.createdAt} />{' '}
                  {topup.status === 'pending' && <a href={topup.paymentUrl}>Pay it</a>}
                  {topup.status === 'credited' && <span> · {formatUsd(topup.creditedAmount)} credited</span>}
                </li>
              ))}
            </ul>
          )}
        </Async>
      </Section>
      <Downloads />
      <Section title="Gas charges">
        <Async state={charges} isEmpty={(result) => result.data.length === 0} empty="No gas charges yet.">
          {(result) => (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>When</th>
                    <th class="hide-narrow">Chain</th>
                    <th class="hide-narrow">Client</th>
                    <th>Operation</th>
                    <th class="num">Charged</th>
                  </tr>
                </thead>
                <tbody>
                  {result.data.map((charge) => (
                    <tr key={charge.id}>
                      <td>
                        <Time iso={charge.createdAt} />
                      </td>
                      <td class="hide-narrow">
                        <Chain id={charge.chainId} />
                      </td>
                      <td class="hide-narrow">{charge.clientLabel ?? '—'}</td>
                      <td>{charge.operationStatus === 'onchain_success' ? 'included' : 'reverted'}</td>
                      <td class="num">{charge.amountUsd ? formatUsd(charge.amountUsd) : 'unpriced'}</td>
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

function BalanceChart({ balance, charges, topups }: { balance: string; charges: Charge[]; topups: Topup[] }) {
  const { days, values } = balanceByDay(balance, charges, topups);
  return (
    <DailyChart
      days={days}
      valueLabel="USD"
      series={[{ label: 'balance', values, color: '#1b6e3a' }]}
      summary={`Prepaid balance by day, ${formatUsd(balance)} today`}
    />
  );
}

function TopUp({ onCreated }: { onCreated: () => void }) {
  const [created, setCreated] = useState<Topup>();
  const form = useForm(
    async (data) => {
      const topup = await post<Topup>('/v1/merchants/me/balance/topups', {
        amount: String(data.get('amount') ?? '').trim(),
      });
      setCreated(topup);
      onCreated();
    },
    ['amount'],
  );
  return (
    <Section title="Top up the prepaid balance">
      <form onSubmit={form.submit} noValidate>
        <Field
          label="Amount (USD)"
          hint="Paid in stablecoins through a checkout page, like a customer pays"
          error={form.errorFor('amount')}
        >
          {(props) => <input {...props} name="amount" inputMode="decimal" />}
        </Field>
        <FormError form={form} />
        <button type="submit" class="primary" disabled={form.busy}>
          Start top-up
        </button>
      </form>
      {created && (
        <p class="notice success" role="status">
          Top-up of {formatUsd(created.amount)} ready:{' '}
          <a href={created.paymentUrl} data-testid="topup-checkout">
            open its checkout
          </a>
          .
        </p>
      )}
    </Section>
  );
}

function Downloads() {
  const today = new Date();
  const lastMonth = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 1, 1));
  const [error, setError] = useState<string>();
  const csv = useForm(
    async (data) => {
      const from = String(data.get('from'));
      const to = String(data.get('to'));
      await download(
        `/v1/merchants/me/balance/charges.csv?from=${from}&to=${to}`,
        `charges-${from}-${to}.csv`,
      );
    },
    ['from', 'to'],
  );
  const statement = async () => {
    setError(undefined);
    const month = lastMonth.toISOString().slice(0, 7);
    try {
      await download(`/v1/merchants/me/balance/statement.pdf?month=${month}`, `statement-${month}.pdf`);
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <Section title="Exports">
      <form onSubmit={csv.submit} noValidate>
        <UtcDateRangeFields form={csv} />
        <FormError form={csv} />
        <div class="actions">
          <button type="submit" disabled={csv.busy}>
            Download charges CSV
          </button>
          <button type="button" onClick={statement}>
            Statement PDF for{' '}
            {lastMonth.toLocaleString('en', { month: 'long', year: 'numeric', timeZone: 'UTC' })}
          </button>
        </div>
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </Section>
  );
}
