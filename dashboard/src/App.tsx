import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { currentToken, onTokenChange, post, setToken } from './api';
import { Link, match, useLocation } from './router';
import { SignIn } from './pages/SignIn';
import { SIGN_IN_LINK_PATH, SignInLink } from './pages/SignInLink';
import { Overview } from './pages/Overview';
import { Sessions } from './pages/Sessions';
import { SessionDetail } from './pages/SessionDetail';
import { NewPaymentLink } from './pages/NewPaymentLink';
import { Webhooks } from './pages/Webhooks';
import { WebhookEndpoint } from './pages/WebhookEndpoint';
import { ApiKeys } from './pages/ApiKeys';
import { Paymaster } from './pages/Paymaster';
import { Billing } from './pages/Billing';
import { Yield } from './pages/Yield';
import { Profile } from './pages/Profile';
import { Plans } from './pages/Plans';
import { Subscriptions } from './pages/Subscriptions';
import { SubscriptionDetail } from './pages/SubscriptionDetail';

const NAV: { path: string; label: string }[] = [
  { path: '/', label: 'Overview' },
  { path: '/sessions', label: 'Sessions' },
  { path: '/payment-links/new', label: 'New payment link' },
  { path: '/plans', label: 'Plans' },
  { path: '/subscriptions', label: 'Subscriptions' },
  { path: '/webhooks', label: 'Webhooks' },
  { path: '/api-keys', label: 'API keys' },
  { path: '/paymaster', label: 'Paymaster' },
  { path: '/billing', label: 'Billing' },
  { path: '/yield', label: 'Yield' },
  { path: '/profile', label: 'Profile' },
];

interface PageRoute {
  pattern: string;
  title: string;
  render: (params: Record<string, string>) => ComponentChildren;
}

const PAGES: PageRoute[] = [
  { pattern: '/', title: 'Overview', render: () => <Overview /> },
  { pattern: '/sessions', title: 'Sessions', render: () => <Sessions /> },
  { pattern: '/sessions/:id', title: 'Session', render: ({ id }) => <SessionDetail id={id!} /> },
  { pattern: '/payment-links/new', title: 'New payment link', render: () => <NewPaymentLink /> },
  { pattern: '/plans', title: 'Plans', render: () => <Plans /> },
  { pattern: '/subscriptions', title: 'Subscriptions', render: () => <Subscriptions /> },
  {
    pattern: '/subscriptions/:id',
    title: 'Subscription',
    render: ({ id }) => <SubscriptionDetail id={id!} />,
  },
  { pattern: '/webhooks', title: 'Webhooks', render: () => <Webhooks /> },
  { pattern: '/webhooks/:id', title: 'Webhook endpoint', render: ({ id }) => <WebhookEndpoint id={id!} /> },
  { pattern: '/api-keys', title: 'API keys', render: () => <ApiKeys /> },
  { pattern: '/paymaster', title: 'Paymaster', render: () => <Paymaster /> },
  { pattern: '/billing', title: 'Billing', render: () => <Billing /> },
  { pattern: '/yield', title: 'Yield', render: () => <Yield /> },
  { pattern: '/profile', title: 'Profile', render: () => <Profile /> },
];

export function App() {
  const [token, setCurrent] = useState(currentToken);
  const { path } = useLocation();
  useEffect(() => onTokenChange(setCurrent), []);
  // Signed in or not: the page itself asks before it signs this tab in.
  if (path === SIGN_IN_LINK_PATH) return <SignInLink />;
  if (!token) return <SignIn />;
  return <Console token={token} />;
}

function Console({ token }: { token: string }) {
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const found = PAGES.map((page) => ({ page, params: match(page.pattern, path) })).find(
    (entry) => entry.params,
  );
  const title = found?.page.title ?? 'Not found';
  useEffect(() => {
    document.title = `${title} · StablePay dashboard`;
    setMenuOpen(false);
  }, [path, title]);
  const signOut = async () => {
    // The token stops working everywhere; whatever the answer, this tab forgets it.
    await post('/v1/auth/logout').catch(() => undefined);
    setToken(null);
  };
  const section = `/${path.split('/')[1] ?? ''}`;
  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">StablePay</span>
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <button type="button" class="signout" onClick={signOut} data-token-tail={token.slice(-6)}>
          Sign out
        </button>
      </header>
      <nav id="nav" class={menuOpen ? 'open' : ''} aria-label="Dashboard">
        <ul>
          {NAV.map((item) => {
            const current = item.path === '/' ? path === '/' : path === item.path || section === item.path;
            return (
              <li key={item.path}>
                <Link to={item.path} current={current}>
                  {item.label}
                </Link>
              </li>
            );
          })}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <h1>{title}</h1>
        {found ? (
          found.page.render(found.params!)
        ) : (
          <p>
            No page here. <Link to="/">Back to the overview</Link>
          </p>
        )}
      </main>
    </div>
  );
}
