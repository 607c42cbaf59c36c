import type { Hex } from 'viem';
import { mailDevMessageIds, waitForMailedCode } from './mailDevCodes';
import { DevApiError, signInWithWallet } from './walletLogin';

/** The dev merchant of `.dev/stack.json` (docs/decisions.md "A newcomer's first hour II (dev merchant, production settings, quiet stack)"). */
export interface DevMerchant {
  id: string;
  walletAddress: string;
  email: string;
  /** An `sk_live_` key for the SK routes (POST /v1/sessions, /v1/webhooks). */
  apiKey: string;
}

export const DEV_MERCHANT_EMAIL = 'dev@stablepay.localhost';
const API_KEY_LABEL = 'dev stack';

export interface EnsureDevMerchantParameters {
  apiUrl: string;
  /** MailDev's web URL: the verification code is read from its REST API. */
  mailWebUrl: string;
  /** The wallet the merchant signs in with (the stack's dev account). */
  privateKey: Hex;
  email?: string;
  /** What the last start wrote: its key is kept while it still authenticates. */
  previous?: DevMerchant;
}

/**
 * Makes the dev merchant ready through the public routes only, as a newcomer would by hand: a wallet
 * login (which creates the merchant the first time), the profile e-mail set and verified with the code
 * MailDev received (so the tool server's e-mail login works for it), and an API key. Run again, it
 * reuses all three: no new mail when the e-mail is already verified, no new key while the old one works.
 */
export async function ensureDevMerchant({
  apiUrl,
  mailWebUrl,
  privateKey,
  email = DEV_MERCHANT_EMAIL,
  previous,
}: EnsureDevMerchantParameters): Promise<DevMerchant> {
  const { token, merchant } = await signInWithWallet(apiUrl, privateKey);
  const auth = { authorization: `Bearer ${token}` };

  if (merchant.email?.toLowerCase() !== email.toLowerCase() || !merchant.emailVerified) {
    const seen = await mailDevMessageIds(mailWebUrl, email);
    await call(apiUrl, 'PATCH', '/v1/merchants/me', auth, { email });
    const code = await waitForMailedCode(mailWebUrl, email, { seen });
    await call(apiUrl, 'POST', '/v1/merchants/me/email/verify', auth, { code });
  }

  const kept =
    previous?.id === merchant.id && previous.apiKey && (await apiKeyWorks(apiUrl, previous.apiKey))
      ? previous.apiKey
      : undefined;
  const apiKey =
    kept ??
    (
      (await call(apiUrl, 'POST', '/v1/merchants/me/api-keys', auth, { label: API_KEY_LABEL })) as {
        rawKey: string;
      }
    ).rawKey;

  return { id: merchant.id, walletAddress: merchant.walletAddress, email, apiKey };
}

/** A key works while an SK route accepts it (it answers 401 once revoked or unknown). */
async function apiKeyWorks(apiUrl: string, apiKey: string): Promise<boolean> {
  const response = await fetch(`${apiUrl}/v1/webhooks`, { headers: { authorization: `Bearer ${apiKey}` } });
  await response.body?.cancel();
  if (response.status === 401) return false;
  if (!response.ok) throw new DevApiError('GET /v1/webhooks', response.status, '');
  return true;
}

async function call(
  apiUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<unknown> {
  const response = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new DevApiError(`${method} ${path}`, response.status, text);
  return text ? JSON.parse(text) : undefined;
}
