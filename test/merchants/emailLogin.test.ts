import { startTestApp, type TestApp } from '../harness/app';
import { freshEmail, mailsTo, waitForCode } from '../harness/mailbox';
import { signInNewMerchant, verifyMerchantEmail, type SignedInMerchant } from '../harness/merchants';

/**
 * Login by e-mail code (docs/decisions.md "Merchant accounts") against the real API, Postgres and MailDev: the codes are read
 * from the mail MailDev received, as a merchant reads them.
 */

/** A client IP of its own per test, so the per-IP allowance of one test never limits another. */
let ipCounter = 0;
const freshIp = () => ({ 'x-forwarded-for': `198.51.100.${++ipCounter}` });

describe('login by e-mail code', () => {
  let app: TestApp;
  /** The app clock: real time plus `skewMs`, so a test can move past a code's 10 minutes. */
  let skewMs = 0;
  beforeAll(async () => {
    app = await startTestApp({}, { now: () => new Date(Date.now() + skewMs) });
  });
  afterEach(() => {
    skewMs = 0;
  });
  afterAll(() => app.close());

  const start = (email: string, headers: Record<string, string> = freshIp()) =>
    app.request('/v1/auth/email/start', { method: 'POST', headers, json: { email } });
  const verify = (email: string, code: string) =>
    app.request('/v1/auth/email/verify', { method: 'POST', json: { email, code } });

  /** A merchant (wallet login) whose profile e-mail is verified: it can sign in by e-mail. */
  async function merchantWithLoginEmail(): Promise<{ merchant: SignedInMerchant; email: string }> {
    const merchant = await signInNewMerchant(app);
    const email = freshEmail();
    await verifyMerchantEmail(app, merchant, email);
    return { merchant, email };
  }

  describe('profile e-mail verification', () => {
    it('PATCH stores a new e-mail unverified and mails a code; the code verifies it', async () => {
      const merchant = await signInNewMerchant(app);
      const email = freshEmail();
      const patched = await app.request('/v1/merchants/me', {
        method: 'PATCH',
        headers: merchant.auth,
        json: { email },
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ email, emailVerified: false });

      const code = await waitForCode(email);
      const [mail] = await mailsTo(email);
      expect(mail!.subject).toContain('verification code');
      const verified = await app.request('/v1/merchants/me/email/verify', {
        method: 'POST',
        headers: merchant.auth,
        json: { code },
      });
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({ id: merchant.merchantId, email, emailVerified: true });
      const profile = await app.request('/v1/merchants/me', { headers: merchant.auth });
      expect(profile.body).toMatchObject({ email, emailVerified: true });
    });

    it('a wrong verification code answers 400 otp_invalid and leaves the e-mail unverified', async () => {
      const merchant = await signInNewMerchant(app);
      const email = freshEmail();
      await app.request('/v1/merchants/me', { method: 'PATCH', headers: merchant.auth, json: { email } });
      const code = await waitForCode(email);
      const response = await app.request('/v1/merchants/me/email/verify', {
        method: 'POST',
        headers: merchant.auth,
        json: { code: code === '000000' ? '000001' : '000000' },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        statusCode: 400,
        message: 'Code is not valid',
        error: 'Bad Request',
        code: 'otp_invalid',
        errors: [],
      });
      expect((await app.request('/v1/merchants/me', { headers: merchant.auth })).body.emailVerified).toBe(
        false,
      );
    });

    it('changing a verified e-mail makes the new one unverified (it cannot sign in until confirmed)', async () => {
      const { merchant, email } = await merchantWithLoginEmail();
      const next = freshEmail();
      const patched = await app.request('/v1/merchants/me', {
        method: 'PATCH',
        headers: merchant.auth,
        json: { email: next },
      });
      expect(patched.body).toMatchObject({ email: next, emailVerified: false });
      // Neither the old address (no longer the profile's) nor the new one (unverified) gets a login code.
      expect((await start(email)).status).toBe(202);
      expect((await start(next)).status).toBe(202);
      await waitForCode(next); // the verification code of the PATCH
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await mailsTo(email)).toHaveLength(1);
      expect(await mailsTo(next)).toHaveLength(1);
    });

    it('a verified e-mail is unique across merchants: the second merchant’s verification answers 409', async () => {
      const { email } = await merchantWithLoginEmail();
      const second = await signInNewMerchant(app);
      const shouted = email.toUpperCase();
      await app.request('/v1/merchants/me', {
        method: 'PATCH',
        headers: second.auth,
        json: { email: shouted },
      });
      const code = await waitForCode(email, { count: 2 });
      const response = await app.request('/v1/merchants/me/email/verify', {
        method: 'POST',
        headers: second.auth,
        json: { code },
      });
      expect(response.status).toBe(409);
      expect(response.body).toEqual({
        statusCode: 409,
        message: 'E-mail address is already verified by another merchant',
        error: 'Conflict',
      });
      const rows = await app.db
        .selectFrom('merchants')
        .select(['id', 'email_verified_at'])
        .where('email', 'in', [email, shouted])
        .execute();
      expect(rows.filter((row) => row.email_verified_at !== null)).toHaveLength(1);
    });

    it('codes are stored as an HMAC only: neither the code nor its plain hash is in the database', async () => {
      const merchant = await signInNewMerchant(app);
      const email = freshEmail();
      await app.request('/v1/merchants/me', { method: 'PATCH', headers: merchant.auth, json: { email } });
      const code = await waitForCode(email);
      const row = await app.db
        .selectFrom('email_codes')
        .selectAll()
        .where('subject', '=', merchant.merchantId)
        .executeTakeFirstOrThrow();
      const { createHash } = await import('node:crypto');
      expect(JSON.stringify(row)).not.toContain(code);
      expect(row.code_hash).not.toBe(createHash('sha256').update(code).digest('hex'));
      expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    });
  });

  describe('POST /v1/auth/email/start and /v1/auth/email/verify', () => {
    it('signs a merchant in with the code mailed to its verified e-mail', async () => {
      const { merchant, email } = await merchantWithLoginEmail();
      const started = await start(email);
      expect(started.status).toBe(202);
      expect(started.body).toEqual({ sent: true });
      const code = await waitForCode(email, { count: 2 });
      expect((await mailsTo(email))[1]!.subject).toBe(`${code} is your StablePay login code`);

      const response = await verify(email.toUpperCase(), code);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        token: expect.stringMatching(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/),
        expiresAt: expect.any(String),
        merchant: expect.objectContaining({ id: merchant.merchantId, email, emailVerified: true }),
      });
      const me = await app.request('/v1/merchants/me', {
        headers: { authorization: `Bearer ${response.body.token}` },
      });
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(merchant.merchantId);
    });

    it('answers an unknown address with the same status and body as a known one, and mails nothing', async () => {
      const { email: known } = await merchantWithLoginEmail();
      const unknown = freshEmail('nobody');
      const [forKnown, forUnknown] = [await start(known), await start(unknown)];
      expect(forUnknown.status).toBe(forKnown.status);
      expect(forUnknown.body).toEqual(forKnown.body);
      expect(forUnknown.headers.get('content-type')).toBe(forKnown.headers.get('content-type'));
      await waitForCode(known, { count: 2 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await mailsTo(unknown)).toEqual([]);
      // A guess for the unknown address is refused exactly like a wrong code for a known one.
      const guessUnknown = await verify(unknown, '123456');
      const wrongKnown = await verify(
        known,
        (await waitForCode(known, { count: 2 })) === '123456' ? '654321' : '123456',
      );
      expect(guessUnknown.status).toBe(401);
      expect(guessUnknown.body).toEqual(wrongKnown.body);
    });

    it('a wrong code answers 401 with code otp_invalid', async () => {
      const { email } = await merchantWithLoginEmail();
      await start(email);
      const code = await waitForCode(email, { count: 2 });
      const response = await verify(email, code === '999999' ? '999998' : '999999');
      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        statusCode: 401,
        message: 'Code is not valid',
        error: 'Unauthorized',
        code: 'otp_invalid',
      });
    });

    it('a code older than 10 minutes answers 401 with code otp_expired', async () => {
      const { email } = await merchantWithLoginEmail();
      await start(email);
      const code = await waitForCode(email, { count: 2 });
      skewMs = 10 * 60 * 1000 + 1000;
      const response = await verify(email, code);
      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        statusCode: 401,
        message: 'Code has expired; request a new one',
        error: 'Unauthorized',
        code: 'otp_expired',
      });
      // Just inside the 10 minutes the same code still works.
      skewMs = 10 * 60 * 1000 - 2000;
      expect((await verify(email, code)).status).toBe(200);
    });

    it('allows 5 tries: the sixth is refused even with the right code', async () => {
      const { email } = await merchantWithLoginEmail();
      await start(email);
      const code = await waitForCode(email, { count: 2 });
      const wrong = code === '111111' ? '222222' : '111111';
      for (let attempt = 1; attempt <= 5; attempt++) {
        expect((await verify(email, wrong)).body.code).toBe('otp_invalid');
      }
      const sixth = await verify(email, code);
      expect(sixth.status).toBe(401);
      expect(sixth.body).toMatchObject({ code: 'otp_invalid', message: expect.stringMatching(/Too many/) });
    });

    it('five concurrent wrong tries and the right code: the code is used at most once and tries never exceed 5', async () => {
      const { email } = await merchantWithLoginEmail();
      await start(email);
      const code = await waitForCode(email, { count: 2 });
      const wrong = code === '333333' ? '444444' : '333333';
      const answers = await Promise.all([
        ...Array.from({ length: 6 }, () => verify(email, wrong)),
        verify(email, code),
        verify(email, code),
      ]);
      expect(answers.filter((answer) => answer.status === 200).length).toBeLessThanOrEqual(1);
      const row = await app.db
        .selectFrom('email_codes')
        .select('attempts')
        .where('purpose', '=', 'login')
        .where('subject', '=', email)
        .executeTakeFirstOrThrow();
      expect(row.attempts).toBeLessThanOrEqual(5);
    });

    it('a used code is refused', async () => {
      const { email } = await merchantWithLoginEmail();
      await start(email);
      const code = await waitForCode(email, { count: 2 });
      expect((await verify(email, code)).status).toBe(200);
      const again = await verify(email, code);
      expect(again.status).toBe(401);
      expect(again.body.code).toBe('otp_invalid');
    });

    it('a new code leaves the one already mailed valid (security review II, finding 3)', async () => {
      const { email } = await merchantWithLoginEmail();
      const ip = freshIp();
      await start(email, ip);
      const first = await waitForCode(email, { count: 2 });
      await start(email, ip);
      await waitForCode(email, { count: 3 });
      expect((await verify(email, first)).status).toBe(200);
    });

    it.each([
      [{ email: 'not-an-email' }, /email: must be an e-mail address/],
      [{}, /email: is required/],
      [{ email: 'a@b.example', extra: 1 }, /Unrecognized key/],
    ])('start with %j answers 400', async (json, message) => {
      const response = await app.request('/v1/auth/email/start', { method: 'POST', json });
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(message);
    });

    it.each([
      [{ email: 'a@b.example', code: '12345' }, /code: must be the 6-digit code/],
      [{ email: 'a@b.example' }, /code: is required/],
      [{ code: '123456' }, /email: is required/],
    ])('verify with %j answers 400', async (json, message) => {
      const response = await app.request('/v1/auth/email/verify', { method: 'POST', json });
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(message);
    });
  });

  describe('rate limits on mailed codes', () => {
    it('an address gets at most 5 codes an hour, known or not: the sixth request answers 429 with Retry-After', async () => {
      const { email: known } = await merchantWithLoginEmail(); // the verification code was the first
      const unknown = freshEmail('nobody');
      for (let request = 1; request <= 4; request++) expect((await start(known)).status).toBe(202);
      for (let request = 1; request <= 5; request++) expect((await start(unknown)).status).toBe(202);
      const [knownRefused, unknownRefused] = [await start(known), await start(unknown)];
      for (const refused of [knownRefused, unknownRefused]) {
        expect(refused.status).toBe(429);
        expect(refused.body).toEqual({
          statusCode: 429,
          message: expect.stringMatching(/^Too many e-mail codes requested; retry after \d+ s$/),
          error: 'Too Many Requests',
        });
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
      }
      await waitForCode(known, { count: 5 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await mailsTo(known)).toHaveLength(5);
    });

    it('the address allowance also covers profile changes: a PATCH over it answers 429 and changes nothing', async () => {
      const email = freshEmail('target');
      for (let request = 1; request <= 5; request++) expect((await start(email)).status).toBe(202);
      const merchant = await signInNewMerchant(app);
      // Another spelling of the same address counts against the same allowance.
      const response = await app.request('/v1/merchants/me', {
        method: 'PATCH',
        headers: { ...merchant.auth, ...freshIp() },
        json: { email: email.toUpperCase(), name: 'Bomber' },
      });
      expect(response.status).toBe(429);
      expect((await app.request('/v1/merchants/me', { headers: merchant.auth })).body).toMatchObject({
        name: null,
        email: null,
      });
    });

    it('one client IP gets at most EMAIL_CODES_PER_IP_PER_HOUR codes, whatever the addresses', async () => {
      const limited = await startTestApp({ EMAIL_CODES_PER_IP_PER_HOUR: '3' });
      try {
        const ip = { 'x-forwarded-for': '203.0.113.77' };
        const startFrom = (headers: Record<string, string>) =>
          limited.request('/v1/auth/email/start', { method: 'POST', headers, json: { email: freshEmail() } });
        for (let request = 1; request <= 3; request++) expect((await startFrom(ip)).status).toBe(202);
        expect((await startFrom(ip)).status).toBe(429);
        expect((await startFrom({ 'x-forwarded-for': '203.0.113.78' })).status).toBe(202);
      } finally {
        await limited.close();
      }
    });
  });

  it('without SMTP_URL e-mail login answers 503', async () => {
    const withoutMail = await startTestApp({ SMTP_URL: '' });
    try {
      const response = await withoutMail.request('/v1/auth/email/start', {
        method: 'POST',
        json: { email: freshEmail() },
      });
      expect(response.status).toBe(503);
      expect(response.body).toEqual({
        statusCode: 503,
        message: 'E-mail login is not available: no mail server is configured',
        error: 'Service Unavailable',
      });
    } finally {
      await withoutMail.close();
    }
  });
});
