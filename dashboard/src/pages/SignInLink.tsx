import { useEffect, useState } from 'preact/hooks';
import { ApiError, currentToken, get, post, revokeToken, setToken } from '../api';
import { navigate } from '../router';
import type { LoginResult, MerchantProfile } from '../types';

/** The page of a sign-in link (`npm start`, `npm run dashboard-link`): `/dashboard/sign-in-link#code=dsc_…`. */
export const SIGN_IN_LINK_PATH = '/sign-in-link';

type State =
  | { step: 'exchanging' }
  | { step: 'refused'; message: string }
  | { step: 'asking'; offered: LoginResult; current: MerchantProfile | undefined };

/** The code of the link, taken once and wiped from the address bar (it is spent by the exchange anyway). */
function takeCode(): string | undefined {
  const code = /^#code=(dsc_[\w-]+)$/.exec(location.hash)?.[1];
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  return code;
}

const accountLabel = (merchant: MerchantProfile) =>
  [merchant.name, merchant.email ?? merchant.walletAddress].filter(Boolean).join(', ');

/**
 * Exchanges the link's one-time code (security review III, finding 3), then names the account it
 * signs in to and asks, naming the signed-in account it would replace: a link never signs a tab in, or
 * switches it, on its own. Turning it down signs the new token out at once.
 */
export function SignInLink() {
  const [code] = useState(takeCode);
  const [state, setState] = useState<State>({ step: 'exchanging' });
  useEffect(() => {
    document.title = 'Sign in from a link · StablePay dashboard';
    if (!code) {
      setState({ step: 'refused', message: 'This link holds no sign-in code.' });
      return;
    }
    (async () => {
      const offered = await post<LoginResult>('/v1/auth/sign-in-code', { code });
      const current = currentToken()
        ? await get<MerchantProfile>('/v1/merchants/me').catch(() => undefined)
        : undefined;
      setState({ step: 'asking', offered, current });
    })().catch((caught: unknown) =>
      setState({
        step: 'refused',
        message: caught instanceof ApiError ? caught.message : 'The sign-in link could not be checked.',
      }),
    );
  }, [code]);

  const leave = () => navigate('/', { replace: true });
  return (
    <main id="main" class="signin">
      <h1>Sign in from a link</h1>
      {state.step === 'exchanging' && <p role="status">Checking the sign-in link…</p>}
      {state.step === 'refused' && (
        <section class="card">
          <p role="alert">{state.message}</p>
          <button type="button" onClick={leave}>
            Go to the dashboard
          </button>
        </section>
      )}
      {state.step === 'asking' && (
        <section class="card" aria-labelledby="offered-heading">
          <h2 id="offered-heading">Sign in as {accountLabel(state.offered.merchant)}?</h2>
          <p>
            This link signs this tab in to the merchant account{' '}
            <strong>{accountLabel(state.offered.merchant)}</strong>{' '}
            <span class="muted">({state.offered.merchant.id})</span>. Continue only if you asked for it.
          </p>
          {state.current && (
            <p role="alert">
              This tab is signed in as <strong>{accountLabel(state.current)}</strong>
              {state.current.id === state.offered.merchant.id
                ? ', the same account.'
                : '. Signing in replaces that account in this tab.'}
            </p>
          )}
          <div class="actions">
            <button
              type="button"
              class="primary"
              onClick={() => {
                setToken(state.offered.token);
                leave();
              }}
            >
              Sign in as {accountLabel(state.offered.merchant)}
            </button>
            <button
              type="button"
              onClick={() => {
                void revokeToken(state.offered.token);
                leave();
              }}
            >
              {state.current ? `Stay signed in as ${accountLabel(state.current)}` : 'Do not sign in'}
            </button>
          </div>
        </section>
      )}
    </main>
  );
}
