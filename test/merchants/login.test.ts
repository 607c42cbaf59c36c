import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant } from '../harness/merchants';

describe('wallet login (SIWE)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const freshAccount = () => privateKeyToAccount(generatePrivateKey());

  async function getPayload(address: string, chainId?: string) {
    const query = new URLSearchParams({ address, ...(chainId && { chainId }) });
    const response = await app.request(`/v1/auth/login-payload?${query}`);
    expect(response.status).toBe(200);
    const { message, ...payload } = response.body;
    return { message: message as string, payload };
  }

  describe('GET /v1/auth/login-payload', () => {
    it('issues an EIP-4361 payload for our domain with a single-use nonce stored in Postgres', async () => {
      const account = freshAccount();
      const response = await app.request(
        `/v1/auth/login-payload?address=${account.address.toLowerCase()}&chainId=84532`,
      );
      expect(response.status).toBe(200);
      const host = new URL(app.config.PUBLIC_BASE_URL).host;
      expect(response.body).toMatchObject({
        domain: host,
        address: account.address,
        uri: app.config.PUBLIC_BASE_URL,
        version: '1',
        chainId: 84532,
        nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
      });
      expect(Date.parse(response.body.expirationTime) - Date.parse(response.body.issuedAt)).toBe(
        10 * 60 * 1000,
      );
      expect(response.body.message).toContain(
        `${host} wants you to sign in with your Ethereum account:\n${account.address}`,
      );
      expect(response.body.message).toContain(`Nonce: ${response.body.nonce}`);
      const stored = await app.db
        .selectFrom('login_nonces')
        .selectAll()
        .where('nonce', '=', response.body.nonce)
        .executeTakeFirst();
      expect(stored).toMatchObject({
        address: account.address.toLowerCase(),
        chain_id: 84532,
        used_at: null,
      });
    });

    it.each([
      ['a missing address', ''],
      ['a malformed address', 'address=0x1234'],
      ['a non-numeric chainId', `address=${privateKeyToAccount(generatePrivateKey()).address}&chainId=base`],
      ['a zero chainId', `address=${privateKeyToAccount(generatePrivateKey()).address}&chainId=0`],
      ['a negative chainId', `address=${privateKeyToAccount(generatePrivateKey()).address}&chainId=-1`],
    ])('answers 400 for %s', async (_case, query) => {
      const response = await app.request(`/v1/auth/login-payload?${query}`);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        statusCode: 400,
        message: expect.stringMatching(/^Validation failed: /),
        error: 'Bad Request',
        errors: expect.arrayContaining([{ field: expect.any(String), message: expect.any(String) }]),
      });
    });
  });

  describe('POST /v1/auth/verify', () => {
    it('logs a wallet in: creates the merchant keyed by the address and returns a JWT', async () => {
      const account = freshAccount();
      const { message, payload } = await getPayload(account.address);
      const response = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: { payload, signature: await account.signMessage({ message }) },
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        token: expect.stringMatching(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/),
        expiresAt: expect.any(String),
        merchant: expect.objectContaining({
          walletAddress: account.address,
          payoutAddress: account.address,
          name: null,
        }),
      });
      const header = JSON.parse(Buffer.from(response.body.token.split('.')[0], 'base64url').toString());
      expect(header).toMatchObject({ alg: 'ES256', kid: expect.any(String) });
      const expiresInSec = (Date.parse(response.body.expiresAt) - Date.now()) / 1000;
      expect(expiresInSec).toBeGreaterThan(24 * 3600 - 60);
      expect(expiresInSec).toBeLessThanOrEqual(24 * 3600);
      const rows = await app.db
        .selectFrom('merchants')
        .selectAll()
        .where('wallet_address', '=', account.address.toLowerCase())
        .execute();
      expect(rows).toHaveLength(1);
    });

    it('a second login of the same wallet (any address casing) updates the same merchant', async () => {
      const account = freshAccount();
      const first = await signInNewMerchant(app, account);
      const second = await signInNewMerchant(app, account);
      expect(second.merchantId).toBe(first.merchantId);
    });

    it('a nonce works once: replaying the same signed payload answers 401', async () => {
      const account = freshAccount();
      const { message, payload } = await getPayload(account.address);
      const signature = await account.signMessage({ message });
      const first = await app.request('/v1/auth/verify', { method: 'POST', json: { payload, signature } });
      expect(first.status).toBe(200);
      const replay = await app.request('/v1/auth/verify', { method: 'POST', json: { payload, signature } });
      expect(replay.status).toBe(401);
      expect(replay.body).toEqual({
        statusCode: 401,
        message: 'Login nonce is unknown, expired or already used',
        error: 'Unauthorized',
      });
    });

    it('of two concurrent verifications of one nonce exactly one succeeds', async () => {
      const account = freshAccount();
      const { message, payload } = await getPayload(account.address);
      const signature = await account.signMessage({ message });
      const responses = await Promise.all(
        Array.from({ length: 5 }, () =>
          app.request('/v1/auth/verify', { method: 'POST', json: { payload, signature } }),
        ),
      );
      expect(responses.map((response) => response.status).sort()).toEqual([200, 401, 401, 401, 401]);
    });

    it('an expired nonce answers 401', async () => {
      const account = freshAccount();
      const { message, payload } = await getPayload(account.address);
      await app.db
        .updateTable('login_nonces')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('nonce', '=', payload.nonce)
        .execute();
      const response = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: { payload, signature: await account.signMessage({ message }) },
      });
      expect(response.status).toBe(401);
      expect(response.body.message).toBe('Login nonce is unknown, expired or already used');
    });

    it('a payload past its expirationTime answers 401 even when signed', async () => {
      const later = await startTestApp({}, { now: () => new Date(Date.now() + 11 * 60 * 1000) });
      try {
        const account = freshAccount();
        const { message, payload } = await getPayload(account.address);
        const response = await later.request('/v1/auth/verify', {
          method: 'POST',
          json: { payload, signature: await account.signMessage({ message }) },
        });
        expect(response.status).toBe(401);
        expect(response.body.message).toBe('Login payload has expired');
      } finally {
        await later.close();
      }
    });

    it('a payload for another domain answers 401', async () => {
      const account = freshAccount();
      const { payload } = await getPayload(account.address);
      const forged = { ...payload, domain: 'evil.example', uri: 'https://evil.example' };
      const { SiweMessage } = await import('siwe');
      const signature = await account.signMessage({ message: new SiweMessage(forged).prepareMessage() });
      const response = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: { payload: forged, signature },
      });
      expect(response.status).toBe(401);
      expect(response.body.message).toBe('Login payload was issued for another domain');
    });

    it('a signature by another wallet, or over another message, answers 401', async () => {
      const account = freshAccount();
      const { message, payload } = await getPayload(account.address);
      const byOther = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: { payload, signature: await freshAccount().signMessage({ message }) },
      });
      expect(byOther.status).toBe(401);
      expect(byOther.body.message).toBe('Signature does not match the login payload');

      const tampered = { ...payload, statement: 'Give me everything' };
      const overOther = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: { payload: tampered, signature: await account.signMessage({ message }) },
      });
      expect(overOther.status).toBe(401);
      // The nonce was not burnt by the failures: the honest signature still works.
      const honest = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: { payload, signature: await account.signMessage({ message }) },
      });
      expect(honest.status).toBe(200);
    });

    it.each([
      ['no body', undefined],
      ['no payload', { signature: '0x12' }],
      ['no signature', { payload: { domain: 'x' } }],
      ['an empty signature', { payload: { domain: 'x' }, signature: '' }],
      ['a string payload', { payload: 'hello', signature: '0x12' }],
    ])('answers 400 for %s', async (_case, json) => {
      const response = await app.request('/v1/auth/verify', {
        method: 'POST',
        ...(json !== undefined && { json }),
      });
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/^Validation failed: /);
    });

    it('accepts the object login-payload answered exactly as it is, message included (docs/decisions.md "Merchant accounts")', async () => {
      const account = freshAccount();
      const issued = await app.request(`/v1/auth/login-payload?address=${account.address}`);
      const response = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: {
          payload: issued.body,
          signature: await account.signMessage({ message: issued.body.message }),
        },
      });
      expect(response.status).toBe(200);
      expect(response.body.merchant.walletAddress).toBe(account.address);
    });

    it('a message that is not the text of the fields answers 401, and the nonce survives for the honest payload', async () => {
      const account = freshAccount();
      const issued = await app.request(`/v1/auth/login-payload?address=${account.address}`);
      const forgedMessage = issued.body.message.replace('Sign in', 'Sign everything');
      const response = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: {
          payload: { ...issued.body, message: forgedMessage },
          signature: await account.signMessage({ message: forgedMessage }),
        },
      });
      expect(response.status).toBe(401);
      expect(response.body.message).toBe('Login payload message does not match its fields');
      const honest = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: {
          payload: issued.body,
          signature: await account.signMessage({ message: issued.body.message }),
        },
      });
      expect(honest.status).toBe(200);
    });

    it('a used nonce is refused before its signature is looked at', async () => {
      const account = freshAccount();
      const { message, payload } = await getPayload(account.address);
      const signature = await account.signMessage({ message });
      expect(
        (await app.request('/v1/auth/verify', { method: 'POST', json: { payload, signature } })).status,
      ).toBe(200);
      // A garbage signature for the spent nonce: the nonce answer, not the signature one.
      const replay = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: { payload, signature: '0xdeadbeef' },
      });
      expect(replay.status).toBe(401);
      expect(replay.body.message).toBe('Login nonce is unknown, expired or already used');
    });

    it('a payload this service never issued answers 401', async () => {
      const response = await app.request('/v1/auth/verify', {
        method: 'POST',
        json: { payload: { domain: 'x', nonce: 'abc' }, signature: '0x1234' },
      });
      expect(response.status).toBe(401);
      expect(response.body.message).toBe('Login payload is not one this service issued');
    });
  });
});
