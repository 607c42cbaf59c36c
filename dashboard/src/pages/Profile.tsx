import { useState } from 'preact/hooks';
import { getAddress, isAddress } from 'viem';
import { ApiError, get, patch, post } from '../api';
import { Async, useLoad } from '../components/async';
import { Address, Section, Time } from '../components/bits';
import { Field, FormError, useForm } from '../components/form';
import { KNOWN_CHAINS } from '../format';
import type { MerchantProfile } from '../types';
import { signWithWallet } from '../wallet';

interface SmartAccount {
  address: string;
  registeredAt: string;
}

/** What the account signs to be registered (the API's `SmartAccountRegistration`): names it, its chain and us. */
const registrationMessage = (address: string, chainId: number, merchantId: string) =>
  `StablePay: register smart account ${getAddress(address)} on chain ${chainId} for merchant ${merchantId}`;

/**
 * The merchant's smart accounts, and registering one: proven by the account's own signature of the
 * registration message, made by the browser wallet (the account's wallet, or its owner's) or pasted.
 */
function SmartAccounts({ merchantId }: { merchantId: string }) {
  const accounts = useLoad(() => get<{ data: SmartAccount[] }>('/v1/merchants/me/smart-accounts'));
  const [registered, setRegistered] = useState<string>();
  const form = useForm(
    async (data) => {
      setRegistered(undefined);
      const address = String(data.get('address') ?? '').trim();
      const chainId = Number(data.get('chainId'));
      let signature = String(data.get('signature') ?? '').trim();
      // Without a valid address there is nothing to sign: the API names what is wrong.
      if (!signature && isAddress(address, { strict: false })) {
        try {
          signature = await signWithWallet(registrationMessage(address, chainId, merchantId), address);
        } catch (caught) {
          throw new ApiError(0, `signature: ${(caught as Error).message}`);
        }
      }
      await post('/v1/merchants/me/smart-accounts', {
        address,
        chainId,
        ...(signature ? { signature } : {}),
      });
      setRegistered(getAddress(address));
      accounts.reload();
    },
    ['address', 'chainId', 'signature'],
    { 403: 'signature', 409: 'address' },
  );
  return (
    <Section title="Smart accounts">
      <Async
        state={accounts}
        isEmpty={(result) => result.data.length === 0}
        empty="No smart account registered yet."
      >
        {(result) => (
          <ul class="plain" data-testid="smart-accounts">
            {result.data.map((account) => (
              <li key={account.address}>
                <Address value={account.address} /> <span class="muted">registered</span>{' '}
                <Time iso={account.registeredAt} />
              </li>
            ))}
          </ul>
        )}
      </Async>
      <h3>Register a smart account</h3>
      <form onSubmit={form.submit} noValidate>
        <Field label="Smart account address" error={form.errorFor('address')}>
          {(props) => <input {...props} name="address" autoComplete="off" spellcheck={false} />}
        </Field>
        <Field
          label="Network that verifies its signature"
          hint="Where the account is deployed (or will be)"
          error={form.errorFor('chainId')}
        >
          {(props) => (
            <select {...props} name="chainId">
              {KNOWN_CHAINS.map((chain) => (
                <option key={chain.id} value={chain.id}>
                  {chain.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Signature (optional)"
          hint="Leave empty to sign with your browser wallet, as the account or its owner"
          error={form.errorFor('signature')}
        >
          {(props) => <input {...props} name="signature" autoComplete="off" spellcheck={false} />}
        </Field>
        <FormError form={form} />
        <button type="submit" disabled={form.busy}>
          Sign and register
        </button>
        {registered && (
          <p role="status" class="muted">
            Registered {registered}.
          </p>
        )}
      </form>
    </Section>
  );
}

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
      <SmartAccounts merchantId={merchant.id} />
    </>
  );
}
