import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { getAddress, serializeErc6492Signature, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { smartAccountRegistrationMessage } from '../../api/auth/smartAccountProof';
import { generateSigningJwk } from '../../config/signingJwk';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { contractWalletChain, type ContractWalletChain } from './contractWallets';

describe('merchant account', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  let other: SignedInMerchant;
  beforeAll(async () => {
    app = await startTestApp();
    [merchant, other] = await Promise.all([signInNewMerchant(app), signInNewMerchant(app)]);
  });
  afterAll(() => app.close());

  describe('session tokens (JWT)', () => {
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

    it.each([
      ['missing', {}, 'Missing bearer token'],
      ['not a bearer scheme', { authorization: 'Basic abc' }, 'Missing bearer token'],
      ['malformed', bearer('not.a.jwt'), 'Invalid or expired session token'],
      [
        'an API key',
        bearer('sk_live_whatever'),
        'This route requires a merchant session token, not an API key',
      ],
    ])('a %s credential answers 401 with the error body', async (_case, headers, message) => {
      const response = await app.request('/v1/merchants/me', { headers });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ statusCode: 401, message, error: 'Unauthorized' });
    });

    it('an expired token answers 401', async () => {
      const keyJwk = await generateSigningJwk('expiry-test');
      const issuer = await startTestApp(
        { JWT_PRIVATE_JWK: JSON.stringify(keyJwk), JWT_TTL_SEC: '60' },
        { now: () => new Date() },
      );
      try {
        const signedIn = await signInNewMerchant(issuer);
        expect((await issuer.request('/v1/merchants/me', { headers: signedIn.auth })).status).toBe(200);
        // Same key, but a token whose exp is in the past.
        const { importJWK } = await import('jose');
        const expired = await new SignJWT({})
          .setProtectedHeader({ alg: 'ES256', kid: 'expiry-test' })
          .setSubject(signedIn.merchantId)
          .setIssuer(issuer.config.PUBLIC_BASE_URL)
          .setAudience('merchant-dashboard')
          .setIssuedAt(Math.floor(Date.now() / 1000) - 120)
          .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
          .sign(await importJWK(keyJwk, 'ES256'));
        const response = await issuer.request('/v1/merchants/me', { headers: bearer(expired) });
        expect(response.status).toBe(401);
        expect(response.body.message).toBe('Invalid or expired session token');
      } finally {
        await issuer.close();
      }
    });

    it('a token signed by a foreign key answers 401, even with our key id', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const header = JSON.parse(Buffer.from(merchant.token.split('.')[0]!, 'base64url').toString());
      const forged = await new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: header.kid })
        .setSubject(merchant.merchantId)
        .setIssuer(app.config.PUBLIC_BASE_URL)
        .setAudience('merchant-dashboard')
        .setExpirationTime('1h')
        .sign(privateKey);
      const response = await app.request('/v1/merchants/me', { headers: bearer(forged) });
      expect(response.status).toBe(401);
    });

    it('an unsigned (alg none) token answers 401', async () => {
      const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const token = `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ sub: merchant.merchantId, exp: 9999999999 })}.`;
      expect((await app.request('/v1/merchants/me', { headers: bearer(token) })).status).toBe(401);
    });

    it('keys rotate without logging anyone out: tokens of the previous key stay valid when it is listed for verification', async () => {
      const oldKey = await generateSigningJwk('old-key');
      const newKey = await generateSigningJwk('new-key');
      const before = await startTestApp({ JWT_PRIVATE_JWK: JSON.stringify(oldKey) });
      const signedIn = await signInNewMerchant(before);
      await before.close();

      const { d: _d, ...oldPublic } = oldKey;
      const after = await startTestApp({
        JWT_PRIVATE_JWK: JSON.stringify(newKey),
        JWT_VERIFICATION_JWKS: JSON.stringify([oldPublic]),
      });
      const notListed = await startTestApp({ JWT_PRIVATE_JWK: JSON.stringify(newKey) });
      try {
        expect((await after.request('/v1/merchants/me', { headers: signedIn.auth })).status).toBe(200);
        expect((await notListed.request('/v1/merchants/me', { headers: signedIn.auth })).status).toBe(401);
        const fresh = await signInNewMerchant(after);
        const kid = JSON.parse(Buffer.from(fresh.token.split('.')[0]!, 'base64url').toString()).kid;
        expect(kid).toBe('new-key');
      } finally {
        await after.close();
        await notListed.close();
      }
    });

    it('a public key cannot be configured as the signing key', async () => {
      const { publicKey } = await generateKeyPair('ES256', { extractable: true });
      const jwk = { ...(await exportJWK(publicKey)), kid: 'public-only' };
      await expect(startTestApp({ JWT_PRIVATE_JWK: JSON.stringify(jwk) })).rejects.toThrow(
        /JWT_PRIVATE_JWK: must be a private key/,
      );
    });
  });

  describe('profile', () => {
    it('GET /v1/merchants/me returns the profile with the login wallet as payout address', async () => {
      const response = await app.request('/v1/merchants/me', { headers: merchant.auth });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        id: merchant.merchantId,
        walletAddress: merchant.account.address,
        name: null,
        email: null,
        emailVerified: false,
        payoutAddress: merchant.account.address,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updatedAt: expect.any(String),
      });
    });

    it('PATCH updates name, e-mail and payout address (checksummed) and clears with null', async () => {
      const payout = privateKeyToAccount(generatePrivateKey()).address;
      const patched = await app.request('/v1/merchants/me', {
        method: 'PATCH',
        headers: merchant.auth,
        json: { name: 'Acme Coffee', email: 'billing@acme.example', payoutAddress: payout.toLowerCase() },
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({
        name: 'Acme Coffee',
        email: 'billing@acme.example',
        payoutAddress: payout,
      });
      const cleared = await app.request('/v1/merchants/me', {
        method: 'PATCH',
        headers: merchant.auth,
        json: { email: null },
      });
      expect(cleared.body).toMatchObject({ name: 'Acme Coffee', email: null, payoutAddress: payout });
      const row = await app.db
        .selectFrom('merchants')
        .selectAll()
        .where('id', '=', merchant.merchantId)
        .executeTakeFirstOrThrow();
      expect(row.payout_address).toBe(payout);
    });

    it.each([
      [{ email: 'not-an-email' }, /email: must be an e-mail address/],
      [{ payoutAddress: '0x123' }, /payoutAddress: must be a 0x address/],
      [
        { payoutAddress: '0x0000000000000000000000000000000000000000' },
        /payoutAddress: must not be the zero address/,
      ],
      [{ name: '' }, /name: must not be empty/],
      [{ name: 42 }, /name: /],
      [{ walletAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }, /Unrecognized key/],
    ])('PATCH %j answers 400 and changes nothing', async (json, message) => {
      const before = await app.request('/v1/merchants/me', { headers: other.auth });
      const response = await app.request('/v1/merchants/me', { method: 'PATCH', headers: other.auth, json });
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(message);
      const after = await app.request('/v1/merchants/me', { headers: other.auth });
      expect(after.body).toEqual(before.body);
    });
  });

  describe('smart accounts', () => {
    // Registration proves control: the account's own signature (ERC-1271, or ERC-6492 before deployment).
    const CHAIN_ID = 84532;
    let wallets: ContractWalletChain;
    beforeAll(async () => {
      const chain = testStack().chains.find((candidate) => candidate.chainId === CHAIN_ID)!;
      wallets = await contractWalletChain({ chainId: CHAIN_ID, rpcUrl: chain.rpcUrl });
    }, 240_000);

    const proofBy = (signer: PrivateKeyAccount, forMerchant: SignedInMerchant, address: Address) =>
      signer.signMessage({
        message: smartAccountRegistrationMessage({
          merchantId: forMerchant.merchantId,
          address: getAddress(address),
          chainId: CHAIN_ID,
        }),
      });
    const register = (who: SignedInMerchant, json: Record<string, unknown>) =>
      app.request('/v1/merchants/me/smart-accounts', { method: 'POST', headers: who.auth, json });
    /** A deployed contract account of a fresh owner, registered by `who` with the owner's signature. */
    async function ownedAccount() {
      const owner = privateKeyToAccount(generatePrivateKey());
      return { owner, address: await wallets.deployWallet(owner.address) };
    }
    const registerWithProof = async (who: SignedInMerchant, owner: PrivateKeyAccount, address: Address) =>
      register(who, { address, chainId: CHAIN_ID, signature: await proofBy(owner, who, address) });
    const ownerOf = (address: string) =>
      app.db
        .selectFrom('smart_accounts')
        .select('merchant_id')
        .where('address', '=', address.toLowerCase())
        .execute();

    it('a deployed contract account signed by its owner (ERC-1271) registers with 204, idempotently, whatever the casing', async () => {
      const { owner, address } = await ownedAccount();
      expect((await registerWithProof(merchant, owner, address)).status).toBe(204);
      const again = await register(merchant, {
        address: address.toLowerCase(),
        chainId: CHAIN_ID,
        signature: await proofBy(owner, merchant, address),
      });
      expect(again.status).toBe(204);
      expect(await ownerOf(address)).toEqual([{ merchant_id: merchant.merchantId }]);
    });

    it('an account not deployed yet proves control with an ERC-6492 signature', async () => {
      const owner = privateKeyToAccount(generatePrivateKey());
      const { address, deployCalldata } = await wallets.counterfactualWallet(owner.address);
      const signature = serializeErc6492Signature({
        address: wallets.factory,
        data: deployCalldata,
        signature: await proofBy(owner, merchant, address),
      });
      expect((await register(merchant, { address, chainId: CHAIN_ID, signature })).status).toBe(204);
      expect(await ownerOf(address)).toEqual([{ merchant_id: merchant.merchantId }]);
    });

    it.each([
      ['a stranger’s signature', 'stranger'],
      ['the owner’s signature made for another merchant', 'replayed'],
      ['a signature that is not one', 'garbage'],
    ])('%s answers 403 and claims nothing', async (_case, kind) => {
      const { owner, address } = await ownedAccount();
      const signature =
        kind === 'stranger'
          ? await proofBy(privateKeyToAccount(generatePrivateKey()), merchant, address)
          : kind === 'replayed'
            ? await proofBy(owner, other, address)
            : '0xdeadbeef';
      const response = await register(merchant, { address, chainId: CHAIN_ID, signature });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        statusCode: 403,
        message: 'The signature does not prove control of the smart account',
        error: 'Forbidden',
      });
      expect(await ownerOf(address)).toEqual([]);
    });

    it('GET lists the merchant’s registered accounts, checksummed, oldest first; never another merchant’s', async () => {
      const lister = await signInNewMerchant(app);
      const list = (who: SignedInMerchant) =>
        app.request('/v1/merchants/me/smart-accounts', { headers: who.auth });
      expect((await list(lister)).body).toEqual({ data: [] });
      const first = await ownedAccount();
      const second = await ownedAccount();
      expect((await registerWithProof(lister, first.owner, first.address)).status).toBe(204);
      expect((await registerWithProof(lister, second.owner, second.address)).status).toBe(204);
      const theirs = await ownedAccount();
      expect((await registerWithProof(other, theirs.owner, theirs.address)).status).toBe(204);

      const listed = await list(lister);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({
        data: [
          { address: getAddress(first.address), registeredAt: expect.any(String) },
          { address: getAddress(second.address), registeredAt: expect.any(String) },
        ],
      });
      expect(Date.parse(listed.body.data[0].registeredAt)).toBeLessThanOrEqual(
        Date.parse(listed.body.data[1].registeredAt),
      );
      expect(
        (await list(other)).body.data.map((account: { address: string }) => account.address),
      ).not.toContain(getAddress(first.address));
      expect((await app.request('/v1/merchants/me/smart-accounts')).status).toBe(401);
    });

    it('an account claimed by another merchant answers 409, even with a valid proof', async () => {
      const { owner, address } = await ownedAccount();
      expect((await registerWithProof(merchant, owner, address)).status).toBe(204);
      const response = await registerWithProof(other, owner, address);
      expect(response.status).toBe(409);
      expect(response.body).toEqual({
        statusCode: 409,
        message: 'Smart account already claimed by another merchant',
        error: 'Conflict',
      });
    });

    it('two merchants claiming the same account concurrently: exactly one wins', async () => {
      for (let round = 0; round < 3; round += 1) {
        const { owner, address } = await ownedAccount();
        const [a, b] = await Promise.all([
          registerWithProof(merchant, owner, address),
          registerWithProof(other, owner, address),
        ]);
        expect([a.status, b.status].sort()).toEqual([204, 409]);
        expect(await ownerOf(address)).toHaveLength(1);
      }
    });

    it.each([
      [{ address: 'not-an-address', chainId: CHAIN_ID, signature: '0x01' }, 'address'],
      [{ address: '0x0000000000000000000000000000000000000001', chainId: CHAIN_ID }, 'signature'],
      [{ address: '0x0000000000000000000000000000000000000001', signature: '0x01' }, 'chainId'],
      [{ address: '0x0000000000000000000000000000000000000001', chainId: 999, signature: '0x01' }, 'chainId'],
    ])('%j answers 400 naming %s', async (json, field) => {
      const response = await register(merchant, json);
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(new RegExp(`^Validation failed: .*${field}`));
    });
  });

  describe('API keys', () => {
    it('create returns the raw key once; the list shows only hash and prefix; the key authenticates SK routes', async () => {
      const created = await app.request('/v1/merchants/me/api-keys', {
        method: 'POST',
        headers: merchant.auth,
        json: { label: 'server' },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        label: 'server',
        prefix: created.body.rawKey.slice(0, 12),
        rawKey: expect.stringMatching(/^sk_live_[A-Za-z0-9_-]{43}$/),
        createdAt: expect.any(String),
      });
      const listed = await app.request('/v1/merchants/me/api-keys', { headers: merchant.auth });
      expect(listed.status).toBe(200);
      const entry = listed.body.data.find((key: { id: string }) => key.id === created.body.id);
      const { createHash } = await import('node:crypto');
      expect(entry).toEqual({
        id: created.body.id,
        label: 'server',
        prefix: created.body.prefix,
        keyHash: createHash('sha256').update(created.body.rawKey).digest('hex'),
        createdAt: created.body.createdAt,
        lastUsedAt: null,
        revokedAt: null,
      });
      expect(listed.text).not.toContain(created.body.rawKey);
      const stored = await app.db
        .selectFrom('api_keys')
        .selectAll()
        .where('id', '=', created.body.id)
        .executeTakeFirstOrThrow();
      expect(JSON.stringify(stored)).not.toContain(created.body.rawKey);
    });

    it('a revoked key answers 401 on SK routes; revocation is idempotent; the list shows it revoked', async () => {
      const rawKey = await createApiKey(app, merchant, 'to revoke');
      const listed = await app.request('/v1/merchants/me/api-keys', { headers: merchant.auth });
      const id = listed.body.data.find(
        (key: { prefix: string }) => rawKey.startsWith(key.prefix) && key.prefix.length > 8,
      ).id;
      const revoked = await app.request(`/v1/merchants/me/api-keys/${id}`, {
        method: 'DELETE',
        headers: merchant.auth,
      });
      expect(revoked.status).toBe(200);
      expect(revoked.body).toEqual({ id, revoked: true, revokedAt: expect.any(String) });
      const again = await app.request(`/v1/merchants/me/api-keys/${id}`, {
        method: 'DELETE',
        headers: merchant.auth,
      });
      expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
      const { authenticateApiKeyHash } = await import('../../db/apiKeys');
      const { hashApiKey } = await import('../../api/auth/authenticate');
      expect(await authenticateApiKeyHash(app.db, hashApiKey(rawKey))).toBeUndefined();
      const onSkRoute = await app.request('/v1/sessions', {
        method: 'POST',
        headers: { authorization: `Bearer ${rawKey}` },
        json: { amount: '1', sandboxMode: true },
      });
      expect(onSkRoute.status).toBe(401);
      expect(onSkRoute.body).toEqual({
        statusCode: 401,
        message: 'Unknown or revoked API key',
        error: 'Unauthorized',
      });
    });

    it('another merchant’s key id, or an unknown one, answers 404', async () => {
      await createApiKey(app, merchant);
      const listed = await app.request('/v1/merchants/me/api-keys', { headers: merchant.auth });
      const id = listed.body.data[0].id;
      const foreign = await app.request(`/v1/merchants/me/api-keys/${id}`, {
        method: 'DELETE',
        headers: other.auth,
      });
      expect(foreign.status).toBe(404);
      expect(
        (await app.request('/v1/merchants/me/api-keys/not-a-uuid', { method: 'DELETE', headers: other.auth }))
          .status,
      ).toBe(404);
      const stillActive = await app.db
        .selectFrom('api_keys')
        .select('revoked_at')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(stillActive.revoked_at).toBeNull();
      const otherList = await app.request('/v1/merchants/me/api-keys', { headers: other.auth });
      expect(otherList.body.data.map((key: { id: string }) => key.id)).not.toContain(id);
    });

    it('records the last use of a key', async () => {
      const rawKey = await createApiKey(app, other, 'usage');
      const { authenticateApiKeyHash } = await import('../../db/apiKeys');
      const { hashApiKey } = await import('../../api/auth/authenticate');
      expect(await authenticateApiKeyHash(app.db, hashApiKey(rawKey))).toBe(other.merchantId);
      const row = await app.db
        .selectFrom('api_keys')
        .select('last_used_at')
        .where('key_hash', '=', hashApiKey(rawKey))
        .executeTakeFirstOrThrow();
      expect(row.last_used_at).toBeInstanceOf(Date);
    });
  });
});
