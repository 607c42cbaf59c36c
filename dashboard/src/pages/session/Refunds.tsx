import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, post } from '../../api';
import { Address, Chain, CopyButton, Section, StatusBadge, Time } from '../../components/bits';
import { Field, FormError, useForm } from '../../components/form';
import { chainName, explorerTxUrl, formatUsd } from '../../format';
import { sendPreparedTransfer, signRefundAuthorization, walletErrorMessage } from '../../refundWallet';
import type { Refund, SessionSummary } from '../../types';
import { walletAvailable } from '../../wallet';

/**
 * A session's refunds on its detail page: what it received, refunded and can still refund; each refund with
 * its state and what the merchant does next (send the prepared transfer from the wallet, or sign the
 * forwarder's authorization as the payout address); and the form that creates one, showing the claim link
 * once when the payer is to give the address.
 */

/** Refunds that wait for someone (the payer, the merchant, the chain) and so may change without a reload. */
const OPEN_STATUSES: Refund['status'][] = [
  'awaiting_address',
  'awaiting_authorization',
  'awaiting_payment',
  'processing',
];
const CANCELABLE: Refund['status'][] = ['awaiting_address', 'awaiting_authorization', 'awaiting_payment'];
/** Money is moving: followed closely, to show `succeeded` as soon as the service has seen it confirmed. */
const PROCESSING_POLL_MS = 2000;
/** Waiting for a person (the payer's address, the merchant's wallet). */
const WAITING_POLL_MS = 5000;
/** Sessions whose money is decided (the API refunds only these). */
const REFUNDABLE_SESSIONS: SessionSummary['status'][] = ['completed', 'expired', 'failed'];

/** A transaction the wallet sent for a refund, kept in the tab until the service has it (a reload keeps it). */
const sentKey = (refundId: string) => `stablepay.refund.sent.${refundId}`;

const refundsPath = (sessionId: string) =>
  `/v1/merchants/me/sessions/${encodeURIComponent(sessionId)}/refunds`;

/** The session's refunds, polled while one of them can still change, paused while the tab is hidden. */
function useSessionRefunds(sessionId: string, onChange: () => void) {
  const [refunds, setRefunds] = useState<Refund[]>();
  const [error, setError] = useState<ApiError>();
  const [round, setRound] = useState(0);
  const seen = useRef('');
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      let delay = WAITING_POLL_MS;
      if (!document.hidden) {
        try {
          const answer = await get<{ data: Refund[] }>(refundsPath(sessionId));
          if (stopped) return;
          setRefunds(answer.data);
          setError(undefined);
          const states = answer.data.map((refund) => `${refund.id}:${refund.status}`).join();
          // A refund that moved changes the session's refunded and refundable amounts.
          if (seen.current && states !== seen.current) onChange();
          seen.current = states;
          if (!answer.data.some((refund) => OPEN_STATUSES.includes(refund.status))) return;
          if (answer.data.some((refund) => refund.status === 'processing')) delay = PROCESSING_POLL_MS;
        } catch (caught) {
          if (stopped) return;
          setError(caught as ApiError);
        }
      }
      timer = setTimeout(poll, delay);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [sessionId, round]);
  return { refunds, error, reload: () => setRound((value) => value + 1) };
}

export function Refunds({
  session,
  chainIds,
  onChange,
}: {
  session: SessionSummary;
  /** The chains the session offered (a refund is paid on one of them). */
  chainIds: number[];
  onChange: () => void;
}) {
  const { refunds, error, reload } = useSessionRefunds(session.id, onChange);
  const changed = () => {
    reload();
    onChange();
  };
  return (
    <Section title="Refunds">
      <dl class="facts refund-amounts">
        <dt>Received</dt>
        <dd data-testid="refund-received">{formatUsd(session.receivedAmount)}</dd>
        <dt>Refunded</dt>
        <dd data-testid="refund-refunded">{formatUsd(session.refundedAmount)}</dd>
        <dt>Refundable</dt>
        <dd data-testid="refund-refundable">{formatUsd(session.refundableAmount)}</dd>
      </dl>
      {error && (
        <p class="field-error" role="alert">
          {error.message}
        </p>
      )}
      {refunds === undefined && !error ? (
        <p class="muted" role="status">
          Loading refunds…
        </p>
      ) : refunds && refunds.length > 0 ? (
        <ul class="refunds" aria-label="Refunds of this session">
          {refunds.map((refund) => (
            <RefundItem key={refund.id} refund={refund} onChange={changed} />
          ))}
        </ul>
      ) : (
        refunds && <p class="muted">No refunds yet.</p>
      )}
      <NewRefund session={session} chainIds={chainIds} onCreated={changed} />
    </Section>
  );
}

function TxLink({ chainId, txHash }: { chainId: number | null; txHash: string }) {
  const url = chainId === null ? undefined : explorerTxUrl(chainId, txHash);
  const short = `${txHash.slice(0, 10)}…${txHash.slice(-6)}`;
  return (
    <span class="address">
      {url ? (
        <a href={url} target="_blank" rel="noopener noreferrer" title={txHash}>
          <code>{short}</code>
        </a>
      ) : (
        <code title={txHash}>{short}</code>
      )}
      <CopyButton text={txHash} label="Copy hash" />
    </span>
  );
}

function RefundItem({ refund, onChange }: { refund: Refund; onChange: () => void }) {
  return (
    <li class="refund" data-testid="refund" data-refund-id={refund.id}>
      <dl class="facts">
        <dt>Amount</dt>
        <dd data-testid="refund-amount">
          {formatUsd(refund.amount)} <span class="muted">in {refund.token}</span>
        </dd>
        <dt>Status</dt>
        <dd data-testid="refund-status" aria-live="polite">
          <StatusBadge status={refund.status} />
        </dd>
        <dt>Paid from</dt>
        <dd>{refund.source === 'forwarder' ? 'The deposit address (your authorization)' : 'Your wallet'}</dd>
        <dt>To</dt>
        <dd>
          {refund.address ? (
            <>
              <Address value={refund.address} />
              {refund.chainId !== null && (
                <>
                  {' on '}
                  <Chain id={refund.chainId} />
                </>
              )}
            </>
          ) : (
            <span class="muted">Waiting for the payer’s address (claim link)</span>
          )}
        </dd>
        {refund.txHash && (
          <>
            <dt>Transaction</dt>
            <dd data-testid="refund-tx">
              <TxLink chainId={refund.chainId} txHash={refund.txHash} />
            </dd>
          </>
        )}
        {refund.reason && (
          <>
            <dt>Reason</dt>
            <dd>{refund.reason}</dd>
          </>
        )}
        {refund.failureReason && (
          <>
            <dt>Failure</dt>
            <dd>{refund.failureReason}</dd>
          </>
        )}
        <dt>Created</dt>
        <dd>
          <Time iso={refund.createdAt} />
        </dd>
      </dl>
      <RefundActions refund={refund} onChange={onChange} />
    </li>
  );
}

type Message = { ok: boolean; text: string };

/**
 * The refund's actions and their state: which one runs, its outcome, and a transaction the wallet sent that
 * the service has not taken yet.
 */
function useRefundActions(refund: Refund, onChange: () => void) {
  const [busy, setBusy] = useState<string>();
  const [message, setMessage] = useState<Message>();
  const [sent, setSent] = useState(() => sessionStorage.getItem(sentKey(refund.id)) ?? undefined);
  const path = `${refundsPath(refund.sessionId)}/${refund.id}`;
  const remember = (txHash: string | undefined) => {
    if (txHash) sessionStorage.setItem(sentKey(refund.id), txHash);
    else sessionStorage.removeItem(sentKey(refund.id));
    setSent(txHash);
  };
  const act = async (label: string, action: () => Promise<Message>) => {
    setBusy(label);
    setMessage(undefined);
    try {
      setMessage(await action());
    } catch (caught) {
      setMessage({ ok: false, text: caught instanceof Error ? caught.message : String(caught) });
    } finally {
      setBusy(undefined);
      onChange();
    }
  };
  const report = async (txHash: string): Promise<Message> => {
    await post<Refund>(`${path}/transaction`, { txHash });
    remember(undefined);
    return { ok: true, text: 'Transaction received: the refund succeeds once it has its confirmations.' };
  };
  const pay = async (): Promise<Message> => {
    const transfer = refund.transfer!;
    let mined: { txHash: string; reverted: boolean };
    try {
      mined = await sendPreparedTransfer(transfer, (txHash) => {
        remember(txHash);
        setMessage({ ok: true, text: 'Sent: waiting for the transaction to be mined…' });
      });
    } catch (caught) {
      throw new Error(walletErrorMessage(caught, transfer.chainId), { cause: caught });
    }
    if (!mined.reverted) return report(mined.txHash);
    remember(undefined);
    return {
      ok: false,
      text: 'The transaction reverted: nothing was sent. Check the token balance and try again.',
    };
  };
  const authorize = async (): Promise<Message> => {
    let signature: string;
    try {
      signature = await signRefundAuthorization(refund.authorization!);
    } catch (caught) {
      throw new Error(walletErrorMessage(caught), { cause: caught });
    }
    await post<Refund>(`${path}/authorize`, { signature });
    return { ok: true, text: 'Authorized: the refund is being sent from the deposit address.' };
  };
  const cancel = () => {
    if (!confirm(`Cancel this refund of ${formatUsd(refund.amount)}? Its amount becomes refundable again.`))
      return;
    void act('cancel', async () => {
      await post<Refund>(`${path}/cancel`);
      return { ok: true, text: 'Refund canceled.' };
    });
  };
  // Once the refund is final its status says it all; a refusal stays until the next try.
  const shown = message && (!message.ok || OPEN_STATUSES.includes(refund.status)) ? message : undefined;
  return {
    path,
    busy,
    shown,
    sent,
    pay: () => act('pay', pay),
    reportSent: () => act('report', () => report(sent!)),
    authorize: () => act('authorize', authorize),
    cancel,
  };
}

/** What the merchant can do with the refund now: pay it, authorize it, report a transaction, cancel it. */
function RefundActions({ refund, onChange }: { refund: Refund; onChange: () => void }) {
  const { path, busy, shown, sent, pay, reportSent, authorize, cancel } = useRefundActions(refund, onChange);
  const canPay = refund.status === 'awaiting_payment' && refund.transfer !== null;
  const canAuthorize = refund.status === 'awaiting_authorization' && Boolean(refund.authorization);
  const canCancel = CANCELABLE.includes(refund.status) && !sent;
  if (!canPay && !canAuthorize && !canCancel && !shown) return null;
  return (
    <div class="refund-actions">
      <RefundActionHint refund={refund} canPay={canPay} canAuthorize={canAuthorize} />
      <div class="actions">
        {canPay && !sent && (
          <button
            type="button"
            class="primary"
            onClick={pay}
            disabled={busy !== undefined || !walletAvailable()}
            data-testid="refund-pay"
          >
            {busy === 'pay' ? 'Waiting for the wallet…' : 'Send from my wallet'}
          </button>
        )}
        {canPay && sent && busy !== 'pay' && (
          <button type="button" class="primary" onClick={reportSent} disabled={busy !== undefined}>
            Report the sent transaction
          </button>
        )}
        {canAuthorize && (
          <button
            type="button"
            class="primary"
            onClick={authorize}
            disabled={busy !== undefined || !walletAvailable()}
            data-testid="refund-authorize"
          >
            {busy === 'authorize' ? 'Waiting for the wallet…' : 'Authorize'}
          </button>
        )}
        {canCancel && (
          <button
            type="button"
            class="danger"
            onClick={cancel}
            disabled={busy !== undefined}
            data-testid="refund-cancel"
          >
            Cancel refund
          </button>
        )}
      </div>
      {canPay && !sent && <ReportTransaction path={path} onReported={onChange} />}
      {shown && (
        <p
          class={shown.ok ? 'muted' : 'field-error'}
          role={shown.ok ? 'status' : 'alert'}
          data-testid="refund-message"
        >
          {shown.text}
        </p>
      )}
    </div>
  );
}

/** What the action asks of the merchant, and that it needs a browser wallet. */
function RefundActionHint({
  refund,
  canPay,
  canAuthorize,
}: {
  refund: Refund;
  canPay: boolean;
  canAuthorize: boolean;
}) {
  return (
    <>
      {canPay && refund.transfer && (
        <p class="hint">
          Send {formatUsd(refund.amount)} in {refund.token} on {chainName(refund.transfer.chainId)} to the
          address above from the wallet that holds it; the refund succeeds once the service has seen the
          transfer confirmed.
        </p>
      )}
      {canAuthorize && refund.authorization && (
        <p class="hint">
          Your payout address <code>{refund.authorization.signer}</code> signs the refund; the service sends
          it from the deposit address and pays the gas. Nothing leaves your wallet.
        </p>
      )}
      {(canPay || canAuthorize) && !walletAvailable() && (
        <p class="hint">No browser wallet was found in this browser.</p>
      )}
    </>
  );
}

/** A transfer the merchant sent another way (another wallet, a multisig): its hash, verified on chain. */
function ReportTransaction({ path, onReported }: { path: string; onReported: () => void }) {
  const form = useForm(
    async (data) => {
      await post<Refund>(`${path}/transaction`, { txHash: String(data.get('txHash') ?? '').trim() });
      onReported();
    },
    ['txHash'],
  );
  return (
    <details class="report-transaction">
      <summary>Sent it another way? Report the transaction</summary>
      <form onSubmit={form.submit} noValidate>
        <Field label="Transaction hash" error={form.errorFor('txHash')}>
          {(props) => (
            <input {...props} name="txHash" autoComplete="off" spellcheck={false} placeholder="0x…" />
          )}
        </Field>
        <FormError form={form} />
        <button type="submit" disabled={form.busy}>
          Report transaction
        </button>
      </form>
    </details>
  );
}

/** A fresh Idempotency-Key per refund the merchant means to create: a retried submission creates it once. */
const newIdempotencyKey = () => `dashboard-refund-${crypto.randomUUID()}`;

function NewRefund({
  session,
  chainIds,
  onCreated,
}: {
  session: SessionSummary;
  chainIds: number[];
  onCreated: () => void;
}) {
  const [created, setCreated] = useState<Refund>();
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey);
  const form = useForm(
    async (data) => {
      const text = (name: string) => String(data.get(name) ?? '').trim();
      const body = {
        ...(text('amount') && { amount: text('amount') }),
        ...(text('reason') && { reason: text('reason') }),
        ...(text('address') && { address: text('address') }),
        ...(text('chainId') && { chainId: Number(text('chainId')) }),
      };
      const refund = await post<Refund>(refundsPath(session.id), body, { 'idempotency-key': idempotencyKey });
      setCreated(refund);
      setIdempotencyKey(newIdempotencyKey());
      onCreated();
    },
    ['amount', 'reason', 'address', 'chainId'],
  );
  const refundable = session.refundableAmount !== '0' && !/^0(\.0+)?$/.test(session.refundableAmount);
  return (
    <div class="new-refund">
      <h3>Refund</h3>
      {created?.claimUrl && (
        <div class="notice success" role="status" data-testid="refund-claim-link">
          <p>
            <strong>Send this link to the payer</strong>: they give the address the refund goes to. Copy it
            now: it is shown only this once.
          </p>
          <p class="secret">
            <code data-testid="refund-claim-url">{created.claimUrl}</code>{' '}
            <CopyButton text={created.claimUrl} label="Copy link" />
          </p>
        </div>
      )}
      {created && !created.claimUrl && (
        <p class="muted" role="status">
          Refund of {formatUsd(created.amount)} created.
        </p>
      )}
      {!REFUNDABLE_SESSIONS.includes(session.status) ? (
        <p class="muted">A session is refunded once it is completed, expired or failed.</p>
      ) : !refundable ? (
        <p class="muted">Nothing left to refund.</p>
      ) : (
        <form onSubmit={form.submit} noValidate key={session.refundableAmount} data-testid="refund-form">
          <Field
            label="Amount (USD)"
            error={form.errorFor('amount')}
            hint={`At most ${formatUsd(session.refundableAmount)}, all that is refundable.`}
          >
            {(props) => (
              <input {...props} name="amount" inputMode="decimal" defaultValue={session.refundableAmount} />
            )}
          </Field>
          <Field label="Reason (optional)" error={form.errorFor('reason')}>
            {(props) => <input {...props} name="reason" maxLength={500} />}
          </Field>
          <Field
            label="Payer’s address (optional)"
            error={form.errorFor('address')}
            hint="Leave empty to get a claim link: the payer gives their address there. The address a deposit came from may be an exchange’s, not the payer’s."
          >
            {(props) => (
              <input {...props} name="address" autoComplete="off" spellcheck={false} placeholder="0x…" />
            )}
          </Field>
          <Field label="Network" error={form.errorFor('chainId')}>
            {(props) => (
              <select {...props} name="chainId">
                <option value="">The network the customer paid on</option>
                {chainIds.map((chainId) => (
                  <option key={chainId} value={String(chainId)}>
                    {chainName(chainId)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <FormError form={form} />
          <div class="actions">
            <button type="submit" class="primary" disabled={form.busy} data-testid="refund-submit">
              {form.busy ? 'Creating…' : 'Refund'}
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
