import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, post } from '../api';
import { Link } from '../router';
import { Address, Chain, CopyButton, Section, StatusBadge, Time } from '../components/bits';
import { formatUnits, formatUsd } from '../format';
import type { SessionEvent, SessionStatus, SessionSummary } from '../types';
import { Refunds } from './session/Refunds';
import { Timeline } from './session/Timeline';

interface PaymentOption {
  chainId: number;
  symbol: string;
  decimals: number;
  amount: string;
  depositAddress: string;
}

/**
 * What the session does with money paid above its amount, chosen at creation (`overpayment`): the API returns
 * the mode but not a held amount, so the page says where the surplus goes and leaves the sums to Received and
 * Settled.
 */
const OVERPAYMENT_MODES: Record<SessionSummary['overpayment'], string> = {
  settle: 'Sent to your payout address with the rest',
  hold: 'Kept at the deposit address for you to refund',
};

/** Statuses after which the session changes no more (but for a late webhook delivery). */
const SETTLED: SessionStatus[] = ['completed', 'failed', 'expired'];
/** How often the page asks again, like the checkout page: often enough to watch a payment land. */
const POLL_MS = 2000;
/** Once the session is settled, only a delivery's retry (minutes to hours apart) can change the page. */
const SETTLED_POLL_MS = 15_000;
/** After an action on the page (a webhook sent again), how long it is followed closely whatever its state. */
const FOLLOW_AFTER_ACTION_MS = 30_000;

/**
 * Follows the session without a reload: polls its summary and its events with their webhook deliveries
 * while it can still change or a delivery is under way (slower once settled), pausing while the tab is
 * hidden.
 */
function useFollowedSession(id: string) {
  const [session, setSession] = useState<SessionSummary>();
  const [events, setEvents] = useState<SessionEvent[]>();
  const [error, setError] = useState<ApiError>();
  const [round, setRound] = useState(0);
  const followUntil = useRef(0);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const base = `/v1/merchants/me/sessions/${encodeURIComponent(id)}`;
    const poll = async () => {
      let delay = POLL_MS;
      if (!document.hidden) {
        try {
          const [next, timeline] = await Promise.all([
            get<SessionSummary>(base),
            get<{ data: SessionEvent[] }>(`${base}/events`),
          ]);
          if (stopped) return;
          setSession(next);
          setEvents(timeline.data);
          setError(undefined);
          const delivering = timeline.data.some((event) =>
            event.deliveries.some((delivery) => delivery.status === 'pending'),
          );
          const settled =
            SETTLED.includes(next.status) && (next.webhookDelivered || next.status !== 'completed');
          const justActed = Date.now() < followUntil.current;
          if (settled && !delivering && !justActed) return;
          if (settled && !justActed) delay = SETTLED_POLL_MS;
        } catch (caught) {
          if (stopped) return;
          setError(caught as ApiError);
          if ((caught as ApiError).status === 404) return;
        }
      }
      timer = setTimeout(poll, delay);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id, round]);
  const refresh = () => {
    followUntil.current = Date.now() + FOLLOW_AFTER_ACTION_MS;
    setRound((value) => value + 1);
  };
  return { session, events, error, refresh };
}

export function SessionDetail({ id }: { id: string }) {
  const { session, events, error, refresh } = useFollowedSession(id);
  const [options, setOptions] = useState<PaymentOption[]>();
  useEffect(() => {
    get<{ paymentOptions: PaymentOption[] }>(`/v1/sessions/${encodeURIComponent(id)}`).then(
      (view) => setOptions(view.paymentOptions),
      () => setOptions([]),
    );
  }, [id]);
  if (!session && error)
    return (
      <div class="notice error" role="alert">
        <p>{error.status === 404 ? 'No session of yours has this id.' : error.message}</p>
        <Link to="/sessions">All sessions</Link>
      </div>
    );
  if (!session)
    return (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  return (
    <>
      <p>
        <Link to="/sessions">← All sessions</Link>
      </p>
      <div class="grid">
        <Section title="Summary">
          <dl class="facts">
            <dt>Status</dt>
            <dd data-testid="session-status" aria-live="polite">
              <StatusBadge status={session.status} />
            </dd>
            <dt>Amount</dt>
            <dd>{formatUsd(session.amount)}</dd>
            <dt>Received</dt>
            <dd data-testid="session-received">{formatUsd(session.receivedAmount)}</dd>
            <dt>Settled</dt>
            <dd>{formatUsd(session.settledAmount)}</dd>
            <dt>Overpayment</dt>
            <dd data-testid="session-overpayment">{OVERPAYMENT_MODES[session.overpayment]}</dd>
            <dt>Mode</dt>
            <dd>{session.sandboxMode ? 'Test (Sepolia testnets)' : 'Live'}</dd>
            <dt>Payment link</dt>
            <dd>
              <a href={session.paymentUrl}>Checkout page</a>{' '}
              <CopyButton text={session.paymentUrl} label="Copy link" />
            </dd>
            <dt>Expires</dt>
            <dd>
              <Time iso={session.expiresAt} />
            </dd>
            {session.failureReason && (
              <>
                <dt>Failure</dt>
                <dd>{session.failureReason}</dd>
              </>
            )}
          </dl>
          <RetryActions session={session} onDone={refresh} />
        </Section>
        <Section title="Timeline">
          <Timeline session={session} events={events} />
        </Section>
      </div>
      <Refunds
        session={session}
        chainIds={[...new Set((options ?? []).map((option) => option.chainId))]}
        onChange={refresh}
      />
      <Section title="Deposit addresses">
        {options === undefined ? (
          <p role="status">Loading…</p>
        ) : options.length === 0 ? (
          <p class="muted">No payment options.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Network</th>
                  <th>Token</th>
                  <th class="num hide-narrow">Amount</th>
                  <th>Deposit address</th>
                </tr>
              </thead>
              <tbody>
                {options.map((option) => (
                  <tr key={`${option.chainId}-${option.symbol}`}>
                    <td>
                      <Chain id={option.chainId} />
                    </td>
                    <td>{option.symbol}</td>
                    <td class="num hide-narrow">{formatUnits(option.amount, option.decimals)}</td>
                    <td>
                      <Address value={option.depositAddress} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </>
  );
}

function RetryActions({ session, onDone }: { session: SessionSummary; onDone: () => void }) {
  const [message, setMessage] = useState<{ ok: boolean; text: string }>();
  const run = async (action: 'retry-forwarder' | 'retry-webhook') => {
    setMessage(undefined);
    try {
      const answer = await post<{ endpointIds?: string[] }>(
        `/v1/merchants/me/sessions/${session.id}/${action}`,
      );
      const endpoints = answer?.endpointIds?.length ?? 0;
      setMessage({
        ok: true,
        text:
          action === 'retry-forwarder'
            ? 'Settlement retried.'
            : endpoints === 0
              ? 'Sent nowhere: no enabled endpoint subscribes to this session’s latest event (see Webhooks).'
              : `Webhook sent again to ${endpoints} endpoint${endpoints === 1 ? '' : 's'}.`,
      });
      onDone();
    } catch (caught) {
      setMessage({ ok: false, text: (caught as Error).message });
    }
  };
  const canRetrySettlement = session.status === 'failed';
  const canResendWebhook = Boolean(session.paidAt);
  if (!canRetrySettlement && !canResendWebhook) return null;
  return (
    <div class="actions">
      {canRetrySettlement && (
        <button type="button" onClick={() => run('retry-forwarder')}>
          Retry settlement
        </button>
      )}
      {canResendWebhook && (
        <button type="button" onClick={() => run('retry-webhook')}>
          Send the webhook again
        </button>
      )}
      {message && (
        <p class={message.ok ? 'muted' : 'field-error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
    </div>
  );
}
