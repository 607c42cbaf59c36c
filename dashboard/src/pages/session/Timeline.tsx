import { Fragment, type ComponentChildren } from 'preact';
import { Address, StatusBadge, Time } from '../../components/bits';
import { formatUsd } from '../../format';
import type { SessionEvent, SessionStatus, SessionSummary } from '../../types';

type StepState = 'done' | 'current' | 'bad' | 'todo';

interface Step {
  /** Which events follow this step on the timeline (their `type`). */
  eventTypes: string[];
  label: string;
  state: StepState;
  detail?: ComponentChildren;
}

/** The session's way from creation to its end, from its summary; events are hung after their step. */
function statusSteps(session: SessionSummary): Step[] {
  const order: SessionStatus[] = ['awaiting_payment', 'confirming', 'bridging', 'completed'];
  const reached = order.indexOf(session.status);
  const paid = Boolean(session.paidAt);
  // A payment mined after expiry (or too little in time) sets no paidAt, yet money arrived: the step is reached.
  const received = session.receivedAmount !== '0';
  const steps: Step[] = [
    { eventTypes: [], label: 'Created', state: 'done', detail: <Time iso={session.createdAt} /> },
    {
      eventTypes: ['session.confirming', 'session.underpaid', 'session.paid_late'],
      label: 'Deposit received',
      state:
        paid || received
          ? 'done'
          : session.status === 'awaiting_payment' || session.status === 'pending'
            ? 'current'
            : 'todo',
      detail: paid ? (
        <>
          <Time iso={session.paidAt} /> {session.txHash && <Address value={session.txHash} />}
        </>
      ) : received ? (
        `${formatUsd(session.receivedAmount)} received`
      ) : (
        'Waiting for the customer'
      ),
    },
    {
      eventTypes: [],
      label: 'Confirming and settling (swap to USDe, stake as sUSDe)',
      state: reached > 1 ? 'done' : session.status === 'confirming' ? 'current' : 'todo',
    },
  ];
  if (session.status === 'bridging')
    steps.push({ eventTypes: [], label: 'Bridging to the mainnet path', state: 'current' });
  if (session.status === 'failed')
    steps.push({
      eventTypes: ['session.failed'],
      label: 'Failed',
      state: 'bad',
      detail: session.failureReason ?? undefined,
    });
  else if (session.status === 'expired')
    steps.push({
      eventTypes: ['session.expired'],
      // Expired with money in (too little in time, or paid after expiry): not "unpaid".
      label: received ? 'Expired' : 'Expired unpaid',
      state: 'bad',
      detail: <Time iso={session.expiresAt} />,
    });
  else
    steps.push({
      eventTypes: ['session.completed'],
      label: 'Completed',
      state: session.status === 'completed' ? 'done' : 'todo',
      detail: session.status === 'completed' ? `${formatUsd(session.settledAmount)} settled` : undefined,
    });
  return steps;
}

/** An event is done once one endpoint took it, under way while a delivery waits, bad when all failed. */
function eventState(event: SessionEvent): StepState {
  const statuses = event.deliveries.map((delivery) => delivery.status);
  if (statuses.length === 0 || statuses.includes('succeeded')) return 'done';
  if (statuses.includes('pending')) return 'current';
  return 'bad';
}

/** The endpoint as people recognise it: host and path, without the scheme. */
const endpointName = (url: string) => url.replace(/^https?:\/\//, '');

function EventDeliveries({ event }: { event: SessionEvent }) {
  if (event.deliveries.length === 0)
    return <p class="muted">Sent nowhere: no enabled endpoint took this event (see Webhooks).</p>;
  const older = event.deliveryCount - event.deliveries.length;
  return (
    <ul class="event-deliveries">
      {event.deliveries.map((delivery) => (
        <li key={delivery.id} data-testid="timeline-delivery">
          <div>
            <StatusBadge status={delivery.status} /> to{' '}
            <code class="endpoint">{endpointName(delivery.endpointUrl)}</code>
            {delivery.resendOf && <span class="muted"> (re-send)</span>}
          </div>
          <ol class="attempts">
            {delivery.attempts.map((attempt) => (
              <li key={attempt.attemptNumber}>
                Attempt {attempt.attemptNumber}: {attempt.outcome.replace(/_/g, ' ')}
                {attempt.statusCode !== null && ` (HTTP ${attempt.statusCode})`} in {attempt.latencyMs} ms,{' '}
                <Time iso={attempt.attemptedAt} />
                {attempt.error && <span class="muted"> — {attempt.error}</span>}
              </li>
            ))}
            {delivery.attempts.length === 0 && <li class="muted">Being sent…</li>}
          </ol>
          {delivery.nextAttemptAt && (
            <p class="muted">
              Next attempt <Time iso={delivery.nextAttemptAt} />
            </p>
          )}
        </li>
      ))}
      {older > 0 && (
        <li class="muted">
          and {older} older deliver{older === 1 ? 'y' : 'ies'} (see Webhooks)
        </li>
      )}
    </ul>
  );
}

function EventItem({ event }: { event: SessionEvent }) {
  const state = eventState(event);
  return (
    <li class={`${state} event`} data-testid="timeline-event">
      <strong>
        Webhook event <code>{event.type}</code>
      </strong>
      <span class="sr-only">
        {' '}
        ({state === 'current' ? 'being delivered' : state === 'bad' ? 'not delivered' : 'done'})
      </span>
      <div class="muted">
        <Time iso={event.createdAt} /> · <code>{event.id}</code>
      </div>
      <EventDeliveries event={event} />
    </li>
  );
}

/**
 * The session's timeline: its statuses, and after each the webhook events it caused with every
 * delivery to the merchant's endpoints and their attempts. `events` is undefined until first loaded.
 */
export function Timeline({ session, events }: { session: SessionSummary; events?: SessionEvent[] }) {
  const steps = statusSteps(session);
  const placed = new Set(steps.flatMap((step) => step.eventTypes));
  const unplaced = (events ?? []).filter((event) => !placed.has(event.type));
  return (
    <ol class="timeline" data-testid="timeline">
      {steps.map((step) => (
        <Fragment key={step.label}>
          <li class={step.state}>
            <strong>{step.label}</strong>
            <span class="sr-only"> ({step.state === 'todo' ? 'not yet' : step.state})</span>
            {step.detail && <div class="muted">{step.detail}</div>}
          </li>
          {(events ?? [])
            .filter((event) => step.eventTypes.includes(event.type))
            .map((event) => (
              <EventItem key={event.id} event={event} />
            ))}
        </Fragment>
      ))}
      {unplaced.map((event) => (
        <EventItem key={event.id} event={event} />
      ))}
      {events === undefined && (
        <li class="todo" role="status">
          Loading webhook events…
        </li>
      )}
    </ol>
  );
}
