import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { TestApp } from './app';
import { mailsTo, waitForCode } from './mailbox';

export interface SignedInMerchant {
  account: PrivateKeyAccount;
  token: string;
  merchantId: string;
  /** Authorization header value for JWT routes. */
  auth: { authorization: string };
}

/** Full headless SIWE login with a fresh wallet: login-payload → sign → verify. */
export async function signInNewMerchant(
  app: Pick<TestApp, 'request'>,
  account = privateKeyToAccount(generatePrivateKey()),
): Promise<SignedInMerchant> {
  const payload = await app.request(`/v1/auth/login-payload?address=${account.address}`);
  if (payload.status !== 200) throw new Error(`login-payload answered ${payload.status}: ${payload.text}`);
  const { message, ...fields } = payload.body;
  const signature = await account.signMessage({ message });
  const verified = await app.request('/v1/auth/verify', {
    method: 'POST',
    json: { payload: fields, signature },
  });
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status}: ${verified.text}`);
  return {
    account,
    token: verified.body.token,
    merchantId: verified.body.merchant.id,
    auth: { authorization: `Bearer ${verified.body.token}` },
  };
}

/** Creates a secret API key for a signed-in merchant; returns the raw key (shown once). */
export async function createApiKey(
  app: Pick<TestApp, 'request'>,
  merchant: SignedInMerchant,
  label?: string,
): Promise<string> {
  const created = await app.request('/v1/merchants/me/api-keys', {
    method: 'POST',
    headers: merchant.auth,
    json: label ? { label } : {},
  });
  if (created.status !== 201) throw new Error(`api key create answered ${created.status}: ${created.text}`);
  return created.body.rawKey;
}

/** Sets the merchant's profile e-mail and confirms it with the code MailDev received: it can sign in by e-mail. */
export async function verifyMerchantEmail(
  app: TestApp,
  merchant: SignedInMerchant,
  email: string,
): Promise<void> {
  const before = (await mailsTo(email)).length;
  const patched = await app.request('/v1/merchants/me', {
    method: 'PATCH',
    headers: merchant.auth,
    json: { email },
  });
  if (patched.status !== 200) throw new Error(`PATCH email answered ${patched.status}: ${patched.text}`);
  const code = await waitForCode(email, { count: before + 1 });
  const verified = await app.request('/v1/merchants/me/email/verify', {
    method: 'POST',
    headers: merchant.auth,
    json: { code },
  });
  if (verified.status !== 200) throw new Error(`email verify answered ${verified.status}: ${verified.text}`);
}
