import { useState } from 'preact/hooks';
import { post, setToken } from '../api';
import { Field, FormError, useForm } from '../components/form';
import type { LoginResult } from '../types';
import { signInWithWallet, walletAvailable } from '../wallet';

/** Sign-in: a browser wallet (SIWE) or a code mailed to the merchant's verified e-mail. */
export function SignIn() {
  return (
    <main id="main" class="signin">
      <h1>StablePay dashboard</h1>
      <p class="muted">Sign in to run your payments, webhooks, paymaster and billing.</p>
      <WalletSignIn />
      <EmailSignIn />
    </main>
  );
}

function WalletSignIn() {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const signIn = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const result = await signInWithWallet();
      setToken(result.token);
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="wallet-heading">
      <h2 id="wallet-heading">With your wallet</h2>
      <p class="muted">
        {walletAvailable()
          ? 'Your wallet asks you to sign a one-time message; nothing is sent on chain.'
          : 'No browser wallet was found in this browser.'}
      </p>
      <button type="button" class="primary" onClick={signIn} disabled={busy || !walletAvailable()}>
        {busy ? 'Waiting for the wallet…' : 'Sign in with wallet'}
      </button>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

function EmailSignIn() {
  const [sentTo, setSentTo] = useState<string>();
  const start = useForm(
    async (data) => {
      const email = String(data.get('email') ?? '');
      await post('/v1/auth/email/start', { email });
      setSentTo(email);
    },
    ['email'],
  );
  const verify = useForm(
    async (data) => {
      const result = await post<LoginResult>('/v1/auth/email/verify', {
        email: sentTo,
        code: String(data.get('code') ?? '').trim(),
      });
      setToken(result.token);
    },
    ['code', 'email'],
  );
  return (
    <section class="card" aria-labelledby="email-heading">
      <h2 id="email-heading">With an e-mail code</h2>
      {!sentTo ? (
        <form onSubmit={start.submit} noValidate>
          <Field label="E-mail (the verified address of your profile)" error={start.errorFor('email')}>
            {(props) => <input {...props} name="email" type="email" autoComplete="email" required />}
          </Field>
          <FormError form={start} />
          <button type="submit" class="primary" disabled={start.busy}>
            {start.busy ? 'Sending…' : 'Send me a code'}
          </button>
        </form>
      ) : (
        <form onSubmit={verify.submit} noValidate>
          <p role="status">
            If <strong>{sentTo}</strong> is a verified login e-mail, a 6-digit code is on its way.
          </p>
          <Field label="Code" error={verify.errorFor('code')}>
            {(props) => (
              <input
                {...props}
                name="code"
                inputMode="numeric"
                autoComplete="one-time-code"
                pattern="[0-9]{6}"
                required
              />
            )}
          </Field>
          <FormError form={verify} />
          <div class="actions">
            <button type="submit" class="primary" disabled={verify.busy}>
              {verify.busy ? 'Checking…' : 'Sign in'}
            </button>
            <button type="button" onClick={() => setSentTo(undefined)}>
              Use another address
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
