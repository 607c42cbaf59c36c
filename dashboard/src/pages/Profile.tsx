import { useState } from 'preact/hooks';
import { get, patch, post } from '../api';
import { Async, useLoad } from '../components/async';
import { Address, Section, Time } from '../components/bits';
import { Field, FormError, useForm } from '../components/form';
import type { MerchantProfile } from '../types';

export function Profile() {
  const profile = useLoad(() => get<MerchantProfile>('/v1/merchants/me'));
  return (
    <Async state={profile}>
      {(merchant) => <ProfileForms merchant={merchant} onChange={profile.reload} />}
    </Async>
  );
}

function ProfileForms({ merchant, onChange }: { merchant: MerchantProfile; onChange: () => void }) {
  const [saved, setSaved] = useState(false);
  const form = useForm(
    async (data) => {
      setSaved(false);
      const name = String(data.get('name') ?? '').trim();
      const email = String(data.get('email') ?? '').trim();
      const payoutAddress = String(data.get('payoutAddress') ?? '').trim();
      const body: Record<string, string | null> = {};
      if (name !== (merchant.name ?? '')) body.name = name || null;
      if (email !== (merchant.email ?? '')) body.email = email || null;
      if (payoutAddress !== merchant.payoutAddress) body.payoutAddress = payoutAddress;
      if (Object.keys(body).length > 0) await patch('/v1/merchants/me', body);
      setSaved(true);
      onChange();
    },
    ['name', 'email', 'payoutAddress'],
  );
  const verify = useForm(
    async (data) => {
      await post('/v1/merchants/me/email/verify', { code: String(data.get('code') ?? '').trim() });
      onChange();
    },
    ['code'],
  );
  return (
    <>
      <Section title="Account">
        <dl class="facts">
          <dt>Account id</dt>
          <dd>
            <code>{merchant.id}</code>
          </dd>
          <dt>Login wallet</dt>
          <dd>
            <Address value={merchant.walletAddress} />
          </dd>
          <dt>Since</dt>
          <dd>
            <Time iso={merchant.createdAt} />
          </dd>
        </dl>
      </Section>
      <Section title="Profile">
        <form onSubmit={form.submit} noValidate>
          <Field label="Business name" error={form.errorFor('name')}>
            {(props) => (
              <input {...props} name="name" defaultValue={merchant.name ?? ''} autoComplete="organization" />
            )}
          </Field>
          <Field
            label="E-mail"
            hint={
              merchant.email
                ? merchant.emailVerified
                  ? 'Verified: you can sign in with it'
                  : 'Not verified yet'
                : 'For sign-in codes and notices'
            }
            error={form.errorFor('email')}
          >
            {(props) => (
              <input
                {...props}
                name="email"
                type="email"
                defaultValue={merchant.email ?? ''}
                autoComplete="email"
              />
            )}
          </Field>
          <Field
            label="Payout address"
            hint="Where settled sUSDe is sent"
            error={form.errorFor('payoutAddress')}
          >
            {(props) => <input {...props} name="payoutAddress" defaultValue={merchant.payoutAddress} />}
          </Field>
          <FormError form={form} />
          <button type="submit" class="primary" disabled={form.busy}>
            Save
          </button>
          {saved && (
            <p role="status" class="muted">
              Saved.
            </p>
          )}
        </form>
      </Section>
      {merchant.email && !merchant.emailVerified && (
        <Section title="Verify your e-mail">
          <form onSubmit={verify.submit} noValidate>
            <Field label="Code from the e-mail" error={verify.errorFor('code')}>
              {(props) => <input {...props} name="code" inputMode="numeric" autoComplete="one-time-code" />}
            </Field>
            <FormError form={verify} />
            <button type="submit" disabled={verify.busy}>
              Verify
            </button>
          </form>
        </Section>
      )}
      <Section title="Smart accounts">
        <p class="muted">
          Smart accounts (e.g. a DeleGator) are registered with their own signature through the API or the MCP
          tool server; they then sign in like the login wallet.
        </p>
      </Section>
    </>
  );
}
