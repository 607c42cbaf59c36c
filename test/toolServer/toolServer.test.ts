import { smartAccountRegistrationMessage } from '../../api/auth/smartAccountProof';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SignJWT, importJWK } from 'jose';
import { generateSigningJwk } from '../../config/signingJwk';
import { startTestApp, type TestApp } from '../harness/app';
import { freshEmail, waitForCode } from '../harness/mailbox';
import {
  createApiKey,
  signInNewMerchant,
  verifyMerchantEmail,
  type SignedInMerchant,
} from '../harness/merchants';
import { testStack } from '../harness/stack';
import { deployFundedDeleGator } from '../delegation/delegatorAccounts';
import { completedSession, storedSubscription } from '../refunds/paidSessions';
import { resultBody, resultText, startToolServer, type ToolServerUnderTest } from './toolServerProcess';

/**
 * The MCP tool server (docs/decisions.md "Tool server (MCP) and session keys") as an MCP client runs it: a child process over stdio, driven by the
 * SDK's own client, against the real API, Postgres and MailDev.
 */

const TOOL_NAMES = [
  'login_start',
  'login_verify',
  'logout',
  'get_profile',
  'update_profile',
  'list_api_keys',
  'create_api_key',
  'revoke_api_key',
  'create_session_key',
  'create_session',
  'get_session',
  'list_sessions',
  'list_refunds',
  'get_refund',
  'create_refund',
  'cancel_refund',
  'authorize_refund',
  'report_refund_transaction',
  'list_plans',
  'get_plan',
  'create_plan',
  'archive_plan',
  'list_subscriptions',
  'get_subscription',
  'cancel_subscription',
  'list_paymaster_clients',
  'create_paymaster_client',
  'update_paymaster_client',
  'revoke_paymaster_client',
  'list_allowlist',
  'add_allowlist_entry',
  'remove_allowlist_entry',
  'get_paymaster_usage',
  'list_paymaster_policies',
  'get_paymaster_policy',
  'create_paymaster_policy',
  'update_paymaster_policy',
  'delete_paymaster_policy',
  'order_paymaster_policies',
  'list_webhooks',
  'create_webhook',
  'get_webhook',
  'update_webhook',
  'delete_webhook',
  'rotate_webhook_secret',
  'list_webhook_deliveries',
  'resend_webhook_delivery',
  'recover_webhook_deliveries',
  'send_webhook_test_event',
];

describe('the MCP tool server over stdio', () => {
  let app: TestApp;
  let signingJwk: Awaited<ReturnType<typeof generateSigningJwk>>;
  /** The API clock: real time plus `skewMs` (codes expire by it). */
  let skewMs = 0;
  const servers: ToolServerUnderTest[] = [];

  beforeAll(async () => {
    signingJwk = await generateSigningJwk('tool-server-test');
    app = await startTestApp(
      { LOG_LEVEL: 'trace', JWT_PRIVATE_JWK: JSON.stringify(signingJwk) },
      { now: () => new Date(Date.now() + skewMs) },
    );
  });
  afterEach(() => {
    skewMs = 0;
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await app.close();
  });

  async function toolServer(options: Omit<Parameters<typeof startToolServer>[0], 'apiUrl'> = {}) {
    const server = await startToolServer({ apiUrl: app.baseUrl, ...options });
    servers.push(server);
    return server;
  }

  /** A merchant with a verified e-mail, signed in to `server` through login_start and login_verify. */
  async function signedIn(
    server: ToolServerUnderTest,
  ): Promise<{ merchant: SignedInMerchant; email: string }> {
    const merchant = await signInNewMerchant(app);
    const email = freshEmail('agent');
    await verifyMerchantEmail(app, merchant, email);
    expect(resultBody(await server.call('login_start', { email }))).toEqual({ sent: true });
    const code = await waitForCode(email, { count: 2 });
    const verified = resultBody(await server.call('login_verify', { email, code }));
    expect(verified).toMatchObject({ signedIn: true, merchant: { id: merchant.merchantId, email } });
    return { merchant, email };
  }

  it('lists exactly the tools of the tool server (docs/decisions.md "Tool server (MCP) and session keys"), each with a JSON Schema of its input', async () => {
    const server = await toolServer();
    const { tools } = await server.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description).toEqual(expect.any(String));
    }
    const schema = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema;
    expect(schema('login_verify')).toMatchObject({
      properties: { email: { type: 'string' }, code: { type: 'string' } },
      required: ['email', 'code'],
    });
    expect(schema('create_session')).toMatchObject({
      properties: { amount: { type: 'string' }, sandboxMode: { type: 'boolean' } },
      required: ['amount'],
    });
    expect(schema('list_sessions').properties).toMatchObject({
      status: { enum: expect.arrayContaining(['awaiting_payment', 'completed']) },
    });
    expect(schema('create_session_key').required).toEqual(['smartAccount']);
    expect(tools.some((tool) => /yield/i.test(tool.name))).toBe(false);
    expect(server.protocolErrors).toEqual([]);
  });

  it('starts with `npm run --silent mcp` and writes nothing but MCP messages to stdout', async () => {
    const server = await toolServer({ command: { command: 'npm', args: ['run', '--silent', 'mcp'] } });
    const { tools } = await server.client.listTools();
    expect(tools).toHaveLength(TOOL_NAMES.length);
    expect(resultText(await server.call('get_profile'))).toMatch(/^LOGIN_REQUIRED: /);
    expect(server.protocolErrors).toEqual([]);
    // The logs are on stderr, as JSON lines.
    expect(server.stderrLines.some((line) => line.includes('tool server ready on stdio'))).toBe(true);
  });

  it('logs in by e-mail with the code MailDev received, and keeps the token in a 0600 credentials file', async () => {
    const server = await toolServer();
    const { merchant } = await signedIn(server);
    const file = await stat(server.credentialsFile);
    expect(file.mode & 0o777).toBe(0o600);
    expect((await stat(dirname(server.credentialsFile))).mode & 0o777).toBe(0o700);
    expect(resultBody(await server.call('get_profile'))).toMatchObject({ id: merchant.merchantId });
    // The session token was never shown to the client.
    const stored = JSON.parse(await readFile(server.credentialsFile, 'utf8'));
    expect(server.transcript.join('\n')).not.toContain(stored.session.token);
  });

  it('calls every tool once with a valid input', async () => {
    const server = await toolServer();
    const { merchant, email } = await signedIn(server);
    const chainId = testStack().chains.find((chain) => chain.chainId === 84532)!.chainId;
    const called = new Set<string>(['login_start', 'login_verify']);
    const ok = async (name: string, args: Record<string, unknown> = {}) => {
      called.add(name);
      return resultBody(await server.call(name, args));
    };
    /** A guarded tool (no elicitation here): the first call answers a token, the second does it. */
    const confirmed = async (name: string, args: Record<string, unknown>) => {
      const pending = await ok(name, args);
      expect(pending).toMatchObject({ confirmationRequired: true });
      return ok(name, { ...args, confirmationToken: pending.confirmationToken });
    };

    expect(await ok('get_profile')).toMatchObject({ email, emailVerified: true });
    expect(await ok('update_profile', { name: 'Agent Coffee' })).toMatchObject({ name: 'Agent Coffee' });

    // A new sk_ key waits for the person's confirmation (this client has no elicitation: a token).
    const keyConfirmation = await ok('create_api_key', { label: 'agent' });
    expect(keyConfirmation).toMatchObject({ confirmationRequired: true });
    const key = await ok('create_api_key', {
      label: 'agent',
      confirmationToken: keyConfirmation.confirmationToken,
    });
    expect(key.rawKey).toMatch(/^sk_live_/);
    expect((await ok('list_api_keys')).data.map((entry: { id: string }) => entry.id)).toContain(key.id);

    // Webhook endpoints with the remembered sk_ key; deliveries with the session token.
    const webhook = await confirmed('create_webhook', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['session.confirming'],
    });
    expect(webhook).toMatchObject({
      url: 'http://127.0.0.1:9/hooks',
      secret: expect.stringMatching(/^whsec_/),
    });
    expect((await ok('list_webhooks')).data).toHaveLength(1);
    expect(await ok('get_webhook', { id: webhook.id })).toMatchObject({ id: webhook.id, enabled: true });
    expect(await confirmed('update_webhook', { id: webhook.id, enabled: false })).toMatchObject({
      enabled: false,
    });
    const rotated = await confirmed('rotate_webhook_secret', { id: webhook.id, overlapSeconds: 600 });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(webhook.secret);
    expect(Date.parse(rotated.previousSecretExpiresAt)).toBeGreaterThan(Date.now());
    expect(await ok('list_webhook_deliveries', { webhookId: webhook.id, limit: 5 })).toMatchObject({
      data: [],
    });
    // Resend and recover go through the API's own answers: a disabled endpoint, an unknown delivery.
    const disabledRecovery = await server.call('recover_webhook_deliveries', {
      webhookId: webhook.id,
      since: new Date(Date.now() - 3600_000).toISOString(),
    });
    called.add('recover_webhook_deliveries');
    expect(resultText(disabledRecovery)).toBe(
      'HTTP 409 Conflict: The webhook endpoint is disabled; enable it first',
    );
    const disabledTest = await server.call('send_webhook_test_event', { webhookId: webhook.id });
    called.add('send_webhook_test_event');
    expect(resultText(disabledTest)).toBe(
      'HTTP 409 Conflict: The webhook endpoint is disabled; enable it first',
    );
    await confirmed('update_webhook', { id: webhook.id, enabled: true });
    expect(
      await ok('recover_webhook_deliveries', {
        webhookId: webhook.id,
        since: new Date(Date.now() - 3600_000).toISOString(),
      }),
    ).toEqual({ queued: 0 });
    const unknownDelivery = await server.call('resend_webhook_delivery', {
      webhookId: webhook.id,
      deliveryId: '00000000-0000-4000-8000-000000000000',
    });
    called.add('resend_webhook_delivery');
    expect(resultText(unknownDelivery)).toBe('HTTP 404 Not Found: Webhook delivery not found');
    expect(await ok('delete_webhook', { id: webhook.id })).toEqual({ id: webhook.id, deleted: true });

    const session = await ok('create_session', {
      amount: '12.50',
      sandboxMode: true,
      merchantName: 'Agent Coffee',
    });
    expect(session).toMatchObject({
      status: 'awaiting_payment',
      paymentUrl: expect.stringContaining('/pay/'),
    });
    expect(await ok('get_session', { id: session.id })).toMatchObject({ id: session.id, amount: '12.5' });
    expect((await ok('list_sessions', { limit: 10, status: 'awaiting_payment' })).data[0]).toMatchObject({
      id: session.id,
    });

    // Refunds (issue 41) of a session paid and settled: merchant-paid, so nothing moves without the merchant.
    const paid = await completedSession(app, merchant.auth, { amount: '20', paidUnits: 20_000_000n });
    const refund = await confirmed('create_refund', {
      sessionId: paid.id,
      amount: '2',
      address: merchant.account.address,
    });
    expect(refund).toMatchObject({ amount: '2', status: 'awaiting_payment', source: 'merchant' });
    expect((await ok('list_refunds', { sessionId: paid.id })).data).toHaveLength(1);
    const refundIds = { sessionId: paid.id, refundId: refund.id };
    expect(await ok('get_refund', refundIds)).toMatchObject({
      id: refund.id,
      transfer: { amount: '2000000' },
    });
    expect(await confirmed('cancel_refund', refundIds)).toMatchObject({ status: 'canceled' });
    const canceledReport = await server.call('report_refund_transaction', {
      ...refundIds,
      txHash: `0x${'cd'.repeat(32)}`,
    });
    called.add('report_refund_transaction');
    expect(resultText(canceledReport)).toBe('HTTP 409 Conflict: Refund is canceled: it takes no transaction');
    // An unknown refund: the API's own 404 (the route's answers for a real one are in the refund tests).
    const unknownRefund = await confirmed('authorize_refund', {
      sessionId: paid.id,
      refundId: '00000000-0000-4000-8000-000000000000',
      signature: `0x${'11'.repeat(65)}`,
    }).catch((error: Error) => error.message);
    expect(unknownRefund).toMatch(/^tool failed: HTTP 404 Not Found: /);

    // Plans and subscriptions (issue 42).
    const plan = await ok('create_plan', { name: 'Coffee club', amount: '12', interval: 'month' });
    expect(plan).toMatchObject({ name: 'Coffee club', archived: false });
    expect((await ok('list_plans')).data.map((row: { id: string }) => row.id)).toEqual([plan.id]);
    expect(await ok('get_plan', { id: plan.id })).toEqual(plan);
    const subscription = await storedSubscription(app, {
      merchantId: merchant.merchantId,
      planId: plan.id,
      customerAccount: merchant.account.address,
    });
    expect((await ok('list_subscriptions', { planId: plan.id, status: 'active' })).data).toHaveLength(1);
    expect(await ok('get_subscription', { id: subscription.id })).toMatchObject({ status: 'active' });
    expect(await confirmed('cancel_subscription', { id: subscription.id, atPeriodEnd: true })).toMatchObject({
      cancelAtPeriodEnd: true,
    });
    expect(await ok('archive_plan', { id: plan.id })).toMatchObject({ archived: true });

    const { client } = await confirmed('create_paymaster_client', {
      label: 'dapp',
      allowedChainIds: [chainId],
    });
    expect(client.clientId).toMatch(/^pmc_test_/);
    expect((await ok('list_paymaster_clients')).data.map((entry: { id: string }) => entry.id)).toContain(
      client.id,
    );
    expect(await confirmed('update_paymaster_client', { id: client.id, gasMode: 'both' })).toMatchObject({
      gasMode: 'both',
    });
    expect(await ok('get_paymaster_usage', { limit: 5, chainId })).toMatchObject({
      data: [],
      nextCursor: null,
    });
    // Sponsorship policies (issue 43): the default one first, a confirmed addition, the order, a delete.
    const [defaultPolicy] = (await ok('list_paymaster_policies', { clientId: client.id })).data;
    const policy = await confirmed('create_paymaster_policy', {
      clientId: client.id,
      name: 'launch',
      chainIds: [chainId],
      allowlist: [{ chainId, contractAddress: '0x1000000000000000000000000000000000000001' }],
    });
    expect(policy).toMatchObject({ name: 'launch', position: 1, chainIds: [chainId] });
    expect(await ok('get_paymaster_policy', { clientId: client.id, policyId: policy.id })).toEqual(policy);
    expect(
      await ok('update_paymaster_policy', { clientId: client.id, policyId: policy.id, name: 'launch week' }),
    ).toMatchObject({ name: 'launch week' });
    const ordered = await ok('order_paymaster_policies', {
      clientId: client.id,
      policyIds: [policy.id, defaultPolicy.id],
    });
    expect(ordered.data.map((entry: { id: string }) => entry.id)).toEqual([policy.id, defaultPolicy.id]);
    expect(await ok('delete_paymaster_policy', { clientId: client.id, policyId: defaultPolicy.id })).toEqual({
      id: defaultPolicy.id,
      deleted: true,
    });
    expect(await ok('revoke_paymaster_client', { id: client.id })).toMatchObject({ id: client.id });

    const contract = '0x1000000000000000000000000000000000000001';
    const entry = await confirmed('add_allowlist_entry', {
      chainId,
      contractAddress: contract,
      label: 'game',
    });
    expect((await ok('list_allowlist')).data.map((row: { id: string }) => row.id)).toContain(entry.id);
    expect(await ok('remove_allowlist_entry', { id: entry.id })).toEqual({ id: entry.id, removed: true });

    expect(await ok('revoke_api_key', { id: key.id })).toMatchObject({ id: key.id, revoked: true });
    // The merchant's DeleGator account (owned by its wallet); sessionKey.test.ts redeems such a grant on chain.
    const local = testStack().chains.find((chain) => chain.chainId === chainId)!;
    const { account } = await deployFundedDeleGator(local, merchant.account.address, 0n);
    const request = {
      smartAccount: account.address,
      chainId,
      token: local.contracts.usdc,
      allowance: '1',
      // The owner's proof that the account is the merchant's (smart-account registration checks it).
      registrationSignature: await merchant.account.signMessage({
        message: smartAccountRegistrationMessage({
          merchantId: merchant.merchantId,
          address: account.address,
          chainId,
        }),
      }),
    };
    const pending = await ok('create_session_key', { ...request, payee: merchant.account.address });
    expect(pending).toMatchObject({ status: 'awaiting_owner_signature', typedData: expect.any(Object) });
    const { domain, types, primaryType, message } = pending.typedData;
    const ownerSignature = await merchant.account.signTypedData({
      domain,
      types,
      primaryType,
      message: { ...message, salt: BigInt(message.salt) },
    });
    expect(
      await ok('create_session_key', {
        smartAccount: account.address,
        sessionKeyId: pending.id,
        ownerSignature,
      }),
    ).toMatchObject({ status: 'active', context: expect.stringMatching(/^0x/) });
    const notDeleGator = await server.call('create_session_key', {
      ...request,
      smartAccount: '0x2000000000000000000000000000000000000002',
      payee: merchant.account.address,
    });
    expect(resultText(notDeleGator)).toMatch(/has no code on chain 84532/);
    expect(await ok('logout')).toEqual({ signedOut: true });

    expect([...called].sort()).toEqual([...TOOL_NAMES].sort());
    expect(server.protocolErrors).toEqual([]);
  });

  describe('the five error prefixes', () => {
    it('LOGIN_REQUIRED: a JWT tool before any login (and after logout)', async () => {
      const server = await toolServer();
      const result = await server.call('list_sessions');
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/^LOGIN_REQUIRED: /);
      await signedIn(server);
      await server.call('logout');
      expect(resultText(await server.call('get_profile'))).toMatch(/^LOGIN_REQUIRED: /);
    });

    it('RE_AUTH_REQUIRED: an expired stored token, and a token the API answers 401 to', async () => {
      const merchant = await signInNewMerchant(app);
      // A real session token of this API whose lifetime is over.
      const expiredAt = Math.floor(Date.now() / 1000) - 60;
      const expired = await new SignJWT({ wallet: merchant.account.address })
        .setProtectedHeader({ alg: 'ES256', kid: signingJwk.kid!, typ: 'JWT' })
        .setSubject(merchant.merchantId)
        .setIssuer(app.config.PUBLIC_BASE_URL)
        .setAudience('merchant-dashboard')
        .setIssuedAt(expiredAt - 3600)
        .setExpirationTime(expiredAt)
        .sign(await importJWK(signingJwk, 'ES256'));
      const credentialsFile = join(await mkdtemp(join(tmpdir(), 'stablepay-mcp-')), 'credentials.json');
      const writeSession = async (expiresAt: string) => {
        await writeFile(
          credentialsFile,
          JSON.stringify({
            session: { token: expired, expiresAt, merchantId: merchant.merchantId, email: null },
          }),
          { mode: 0o600 },
        );
      };

      await writeSession(new Date(expiredAt * 1000).toISOString());
      const server = await toolServer({ credentialsFile });
      const result = await server.call('get_profile');
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/^RE_AUTH_REQUIRED: the stored session token expired/);

      // The file claims a later expiry: the API itself refuses the token (401).
      await writeSession(new Date(Date.now() + 3600_000).toISOString());
      const refused = await server.call('list_api_keys');
      expect(resultText(refused)).toMatch(/^RE_AUTH_REQUIRED: the API refused the stored session token/);
    });

    it('OTP_INVALID: a wrong code; OTP_EXPIRED: a code older than 10 minutes', async () => {
      const server = await toolServer();
      const merchant = await signInNewMerchant(app);
      const email = freshEmail('otp');
      await verifyMerchantEmail(app, merchant, email);
      await server.call('login_start', { email });
      const code = await waitForCode(email, { count: 2 });
      const wrong = await server.call('login_verify', {
        email,
        code: code === '000000' ? '000001' : '000000',
      });
      expect(wrong.isError).toBe(true);
      expect(resultText(wrong)).toBe('OTP_INVALID: Code is not valid');

      skewMs = 10 * 60 * 1000 + 1000;
      const late = await server.call('login_verify', { email, code });
      expect(late.isError).toBe(true);
      expect(resultText(late)).toBe('OTP_EXPIRED: Code has expired; request a new one');
    });

    it('API_KEY_REQUIRED: a webhook tool without an sk_ key, and with a revoked one', async () => {
      const server = await toolServer();
      await signedIn(server);
      const result = await server.call('list_webhooks');
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/^API_KEY_REQUIRED: /);

      const merchant = await signInNewMerchant(app);
      const rawKey = await createApiKey(app, merchant, 'revoked');
      const keys = await app.request('/v1/merchants/me/api-keys', { headers: merchant.auth });
      await app.request(`/v1/merchants/me/api-keys/${keys.body.data[0].id}`, {
        method: 'DELETE',
        headers: merchant.auth,
      });
      const withRevoked = await toolServer({ env: { STABLEPAY_API_KEY: rawKey } });
      expect(resultText(await withRevoked.call('list_webhooks'))).toMatch(
        /^API_KEY_REQUIRED: the API refused the sk_ key/,
      );
    });

    it('other API failures carry the API’s status and message', async () => {
      const server = await toolServer();
      await signedIn(server);
      const result = await server.call('get_session', { id: '00000000-0000-4000-8000-000000000000' });
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/^HTTP 404 Not Found: /);
    });
  });

  it('never logs a code, token or key: neither the API nor the tool server', async () => {
    const server = await toolServer();
    const { email } = await signedIn(server);
    const loginCode = await waitForCode(email, { count: 2 });
    const { confirmationToken } = resultBody(await server.call('create_api_key', { label: 'logged?' }));
    const key = resultBody(await server.call('create_api_key', { label: 'logged?', confirmationToken }));
    const hook = { url: 'http://127.0.0.1:9/hooks' };
    const webhookConfirmation = resultBody(await server.call('create_webhook', hook)).confirmationToken;
    const webhook = resultBody(
      await server.call('create_webhook', { ...hook, confirmationToken: webhookConfirmation }),
    );
    await server.call('list_webhooks');
    const stored = JSON.parse(await readFile(server.credentialsFile, 'utf8'));

    const logs = [...app.logLines, ...server.stderrLines].join('\n');
    expect(server.stderrLines.some((line) => line.includes('API call'))).toBe(true);
    expect(logs).not.toMatch(new RegExp(`(?<![0-9])${loginCode}(?![0-9])`));
    for (const secret of [
      stored.session.token,
      key.rawKey,
      webhook.secret,
      confirmationToken,
      webhookConfirmation,
    ]) {
      expect(logs).not.toContain(secret);
    }
  });
});
