import { useState } from 'preact/hooks';
import { post } from '../api';
import { Link } from '../router';
import { CopyButton, Section } from '../components/bits';
import { Field, FormError, useForm } from '../components/form';
import { QrCode } from '../components/qr';
import { formatUsd } from '../format';
import { STABLECOIN_SYMBOLS } from '../../../chain/stablecoins';

interface Created {
  id: string;
  paymentUrl: string;
  status: string;
  expiresAt: string;
}

const FIELDS = [
  'amount',
  'merchantName',
  'paymentOptionSymbols',
  'expiresInSec',
  'successUrl',
  'sandboxMode',
];

/** A payment session made from the dashboard: its link to send and a QR code to show. */
export function NewPaymentLink() {
  const [created, setCreated] = useState<Created & { amount: string }>();
  const form = useForm(async (data) => {
    const amount = String(data.get('amount') ?? '').trim();
    const merchantName = String(data.get('merchantName') ?? '').trim();
    const successUrl = String(data.get('successUrl') ?? '').trim();
    const minutes = String(data.get('expiresInMinutes') ?? '').trim();
    const symbols = STABLECOIN_SYMBOLS.filter((symbol) => data.get(`symbol-${symbol}`) === 'on');
    const body = {
      amount,
      ...(merchantName ? { merchantName } : {}),
      ...(successUrl ? { successUrl } : {}),
      // Minutes for people; the API takes seconds (a bad value comes back as its 400).
      ...(minutes ? { expiresInSec: /^\d+$/.test(minutes) ? Number(minutes) * 60 : minutes } : {}),
      paymentOptionSymbols: symbols,
      sandboxMode: data.get('sandboxMode') === 'on',
    };
    const session = await post<Created>('/v1/merchants/me/sessions', body);
    setCreated({ ...session, amount });
  }, FIELDS);

  if (created)
    return (
      <Section title="Payment link ready">
        <p>
          Send this link to your customer: it opens the checkout for{' '}
          <strong>{formatUsd(created.amount)}</strong>.
        </p>
        <p>
          <a href={created.paymentUrl} data-testid="payment-url">
            {created.paymentUrl}
          </a>
          <CopyButton text={created.paymentUrl} label="Copy link" />
        </p>
        <QrCode text={created.paymentUrl} label={`QR code of ${created.paymentUrl}`} />
        <div class="actions">
          <Link to={`/sessions/${created.id}`} class="button">
            Follow this session
          </Link>
          <button type="button" onClick={() => setCreated(undefined)}>
            Create another
          </button>
        </div>
      </Section>
    );

  return (
    <Section title="Create a payment link">
      <form onSubmit={form.submit} noValidate>
        <Field label="Amount (USD)" hint="A decimal, e.g. 25.00" error={form.errorFor('amount')}>
          {(props) => <input {...props} name="amount" inputMode="decimal" required />}
        </Field>
        <Field label="Shown as (merchant name)" error={form.errorFor('merchantName')}>
          {(props) => <input {...props} name="merchantName" autoComplete="organization" />}
        </Field>
        <fieldset class="field">
          <legend>Stablecoins the customer may pay with</legend>
          {STABLECOIN_SYMBOLS.map((symbol) => (
            <label key={symbol} class="check">
              <input type="checkbox" name={`symbol-${symbol}`} defaultChecked /> {symbol}
            </label>
          ))}
          {form.errorFor('paymentOptionSymbols') && (
            <p class="field-error" role="alert">
              {form.errorFor('paymentOptionSymbols')}
            </p>
          )}
        </fieldset>
        <Field
          label="Expires in (minutes)"
          hint="1 to 10080; 60 when left empty"
          error={form.errorFor('expiresInSec')}
        >
          {(props) => <input {...props} name="expiresInMinutes" inputMode="numeric" />}
        </Field>
        <Field
          label="Success URL (optional)"
          hint="Where the customer returns after paying (https)"
          error={form.errorFor('successUrl')}
        >
          {(props) => <input {...props} name="successUrl" type="url" />}
        </Field>
        <label class="check">
          <input type="checkbox" name="sandboxMode" /> Test mode (Sepolia testnets)
        </label>
        <FormError form={form} />
        <div class="actions">
          <button type="submit" class="primary" disabled={form.busy}>
            {form.busy ? 'Creating…' : 'Create payment link'}
          </button>
        </div>
      </form>
    </Section>
  );
}
