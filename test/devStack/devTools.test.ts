import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createPublicClient, erc20Abi, http, numberToHex, parseEther, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ensureDevMerchant } from '../../dev/devMerchant';
import type { StackDescription } from '../../dev/stackDescription';
import { startTestApp, type TestApp } from '../harness/app';
import { freshEmail, mailsTo, waitForCode } from '../harness/mailbox';
import { testStack } from '../harness/stack';
import { resultBody, startToolServer } from '../toolServer/toolServerProcess';

/**
 * The dev merchant of `npm start` (docs/decisions.md "A newcomer's first hour II (dev merchant, production settings, quiet stack)") and the dev tools `npm run token` and `npm run pay`,
 * against the run's real API, MailDev and chains. The tools run as the scripts npm runs, pointed at a
 * stack file that describes this run's stack (STABLEPAY_STACK_FILE).
 */

const root = resolve(__dirname, '..', '..');
const run = promisify(execFile);
const LIMITED_PER_MINUTE = 6;
const REFILL_SEC = 60 / LIMITED_PER_MINUTE;

describe('the dev merchant and the dev tools', () => {
  let app: TestApp;
  let stackFile: string;
  /**
   * The same API with login and the public reads at 6 a minute: a token every 10 s, so a script started
   * right after a refill meets the 429 however slowly it starts (up to those 10 s).
   */
  let limited: TestApp;
  let limitedStackFile: string;
  /** The "dev account" of this test's stack file: a fresh wallet, so no other test shares its nonce. */
  const devPrivateKey = generatePrivateKey();
  const devAccount = privateKeyToAccount(devPrivateKey);

  beforeAll(async () => {
    app = await startTestApp();
    const stack = testStack();
    const description: Pick<StackDescription, 'apiUrl' | 'databaseUrl' | 'chains' | 'mail' | 'devAccount'> = {
      apiUrl: app.baseUrl,
      databaseUrl: stack.databaseUrl,
      chains: stack.chains,
      mail: stack.mail,
      devAccount: { address: devAccount.address, privateKey: devPrivateKey },
    };
    stackFile = join(await mkdtemp(join(tmpdir(), 'stablepay-dev-tools-')), 'stack.json');
    await writeFile(stackFile, JSON.stringify(description));
    limited = await startTestApp({
      RATE_LIMIT_LOGIN_PER_MINUTE: String(LIMITED_PER_MINUTE),
      RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: String(LIMITED_PER_MINUTE),
    });
    limitedStackFile = join(await mkdtemp(join(tmpdir(), 'stablepay-dev-tools-')), 'stack.json');
    await writeFile(limitedStackFile, JSON.stringify({ ...description, apiUrl: limited.baseUrl }));
  });
  afterAll(async () => {
    await app?.close();
    await limited?.close();
  });

  /** Runs `npm run <script>` as npm does (tsx), against this test's stack file. */
  async function script(
    file: string,
    args: string[],
    stack = stackFile,
  ): Promise<{ stdout: string; stderr: string; code: number }> {
    try {
      const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', file, ...args], {
        cwd: root,
        env: { ...process.env, STABLEPAY_STACK_FILE: stack },
      });
      return { stdout, stderr, code: 0 };
    } catch (error) {
      const failed = error as { stdout: string; stderr: string; code: number };
      return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
    }
  }

  async function profileOf(token: string) {
    const profile = await app.request('/v1/merchants/me', { headers: { authorization: `Bearer ${token}` } });
    expect(profile.status).toBe(200);
    return profile.body as { id: string; walletAddress: string; email: string; emailVerified: boolean };
  }

  it('is signed in with its wallet, has its e-mail verified through MailDev and holds a working sk_live_ key', async () => {
    const privateKey = generatePrivateKey();
    const email = freshEmail('dev');
    const merchant = await ensureDevMerchant({
      apiUrl: app.baseUrl,
      mailWebUrl: testStack().mail.webUrl,
      privateKey,
      email,
    });
    expect(merchant).toEqual({
      id: expect.any(String),
      walletAddress: privateKeyToAccount(privateKey).address,
      email,
      apiKey: expect.stringMatching(/^sk_live_/),
    });

    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: { authorization: `Bearer ${merchant.apiKey}` },
      json: { amount: '12.5', sandboxMode: true },
    });
    expect(created.status).toBe(201);

    // The tool server signs in with no wallet step: login_start, the code `npm run mail-code` reads, login_verify.
    await writeFile(
      stackFile,
      JSON.stringify({ ...JSON.parse(await readFile(stackFile, 'utf8')), devMerchant: merchant }),
    );
    const server = await startToolServer({ apiUrl: app.baseUrl });
    try {
      expect(resultBody(await server.call('login_start', { email }))).toEqual({ sent: true });
      await waitForCode(email, { count: 2 });
      const code = await script('dev/mailCode.ts', []);
      expect(code).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d{6}\n$/) });
      const verified = resultBody(await server.call('login_verify', { email, code: code.stdout.trim() }));
      expect(verified).toMatchObject({ signedIn: true, merchant: { id: merchant.id, email } });
      expect(resultBody(await server.call('get_profile'))).toMatchObject({
        id: merchant.id,
        emailVerified: true,
      });
    } finally {
      await server.close();
    }
  });

  it('is the same merchant with the same key on the next start, mailing nothing; a revoked key is replaced', async () => {
    const parameters = {
      apiUrl: app.baseUrl,
      mailWebUrl: testStack().mail.webUrl,
      privateKey: generatePrivateKey(),
      email: freshEmail('dev'),
    };
    const first = await ensureDevMerchant(parameters);
    const mailsAfterFirst = (await mailsTo(parameters.email)).length;
    expect(mailsAfterFirst).toBe(1);

    const second = await ensureDevMerchant({ ...parameters, previous: first });
    expect(second).toEqual(first);
    expect(await mailsTo(parameters.email)).toHaveLength(mailsAfterFirst);

    const keys = await signedInKeys(parameters.privateKey);
    expect(keys.list).toHaveLength(1);
    const revoked = await app.request(`/v1/merchants/me/api-keys/${keys.list[0]!.id}`, {
      method: 'DELETE',
      headers: keys.auth,
    });
    expect(revoked.status).toBe(200);

    const third = await ensureDevMerchant({ ...parameters, previous: second });
    expect(third.id).toBe(first.id);
    expect(third.apiKey).toMatch(/^sk_live_/);
    expect(third.apiKey).not.toBe(first.apiKey);
    const listed = await app.request('/v1/webhooks', {
      headers: { authorization: `Bearer ${third.apiKey}` },
    });
    expect(listed.status).toBe(200);
  });

  async function signedInKeys(privateKey: Hex) {
    const { stdout } = await script('dev/token.ts', ['--private-key', privateKey]);
    const auth = { authorization: `Bearer ${stdout.trim()}` };
    const keys = await app.request('/v1/merchants/me/api-keys', { headers: auth });
    expect(keys.status).toBe(200);
    return { auth, list: keys.body.data as { id: string }[] };
  }

  it('npm run token prints one fresh merchant JWT for the dev account, or for the wallet of --private-key', async () => {
    const dev = await script('dev/token.ts', []);
    expect(dev.code).toBe(0);
    expect(dev.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect((await profileOf(dev.stdout.trim())).walletAddress).toBe(devAccount.address);

    const otherKey = generatePrivateKey();
    const other = privateKeyToAccount(otherKey);
    const another = await script('dev/token.ts', ['--private-key', otherKey]);
    expect(another.code).toBe(0);
    expect((await profileOf(another.stdout.trim())).walletAddress).toBe(other.address);

    const bad = await script('dev/token.ts', ['--private-key', '0x1234']);
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toContain('--private-key must be 0x and 64 hex digits');
  });

  /** A dev merchant of its own (fresh wallet and e-mail), as `npm start` makes one. */
  const newDevMerchant = () =>
    ensureDevMerchant({
      apiUrl: app.baseUrl,
      mailWebUrl: testStack().mail.webUrl,
      privateKey: generatePrivateKey(),
      email: freshEmail('dev'),
    });

  /** A sandbox session of `amount` USD for `merchant`, made with its sk_live_ key; its id. */
  async function sandboxSessionOf(merchant: { apiKey: string }, amount: string): Promise<string> {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: { authorization: `Bearer ${merchant.apiKey}` },
      json: { amount, sandboxMode: true },
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  }

  it('npm run dashboard-link prints a sign-in link for the dev merchant whose code the API exchanges once', async () => {
    const noMerchant = await script('dev/dashboardLink.ts', [], limitedStackFile);
    expect(noMerchant).toMatchObject({ code: 1, stdout: '' });
    expect(noMerchant.stderr).toContain('the stack file names no dev merchant');

    const merchant = await newDevMerchant();
    const withMerchant = join(await mkdtemp(join(tmpdir(), 'stablepay-dev-tools-')), 'stack.json');
    await writeFile(
      withMerchant,
      JSON.stringify({ ...JSON.parse(await readFile(stackFile, 'utf8')), devMerchant: merchant }),
    );
    const printed = await script('dev/dashboardLink.ts', [], withMerchant);
    expect(printed.code).toBe(0);
    const code = new RegExp(`^${app.baseUrl}/dashboard/sign-in-link#code=(dsc_[\\w-]{43})\\n$`).exec(
      printed.stdout,
    )?.[1];
    expect(code).toBeDefined();
    const exchange = () => app.request('/v1/auth/sign-in-code', { method: 'POST', json: { code } });
    const first = await exchange();
    expect(first).toMatchObject({ status: 200, body: { merchant: { id: merchant.id } } });
    expect((await profileOf(first.body.token)).id).toBe(merchant.id);
    expect((await exchange()).status).toBe(401);
  });

  /** Gives the dev account gas on a local chain (the tokens themselves have an open mint). */
  async function fundDevAccountOn(chainId: number) {
    const chain = testStack().chains.find((candidate) => candidate.chainId === chainId)!;
    await fetch(chain.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'anvil_setBalance',
        params: [devAccount.address, numberToHex(parseEther('10'))],
      }),
    });
    return chain;
  }

  it('npm run pay transfers the exact amount of the asked token and chain to the session deposit address', async () => {
    const chain = await fundDevAccountOn(84532);
    const sessionId = await sandboxSessionOf(await newDevMerchant(), '7.123456');
    const read = await app.request(`/v1/sessions/${sessionId}`);
    const option = (
      read.body.paymentOptions as {
        chainId: number;
        symbol: string;
        depositAddress: Address;
        tokenAddress: Address;
      }[]
    ).find((candidate) => candidate.chainId === 84532 && candidate.symbol === 'USDT')!;

    const paid = await script('dev/pay.ts', [sessionId, '--symbol', 'USDT', '--chain', '84532']);
    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain(
      `paid 7.123456 USDT on base-sepolia (chain 84532) to ${option.depositAddress}`,
    );
    expect(paid.stdout).toContain(`curl -s ${app.baseUrl}/v1/sessions/${sessionId}/status`);
    const reader = createPublicClient({ transport: http(chain.rpcUrl) });
    const balance = await reader.readContract({
      address: option.tokenAddress,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [option.depositAddress],
    });
    expect(balance).toBe(7_123_456n);

    const none = await script('dev/pay.ts', [sessionId, '--chain', '999']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`session ${sessionId} offers no USDC on chain 999`);
    const unknown = await script('dev/pay.ts', ['00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('GET /v1/sessions/{id} answered 404');
  });

  /**
   * Spends this client's (127.0.0.1's) allowance on `path` of the limited app, then waits for the next
   * token and takes it the moment it refills: the following token is then a whole refill interval away,
   * and the script started next meets a 429 whatever its start-up time (a plain exhaustion left a random
   * part of the interval, and a slow start on a loaded machine outlived it).
   */
  async function exhaustRightAfterRefill(path: string): Promise<void> {
    let refused = false;
    for (let sent = 0; sent < 2_000; sent++) {
      const response = await limited.request(path);
      if (response.status === 429) {
        refused = true;
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      if (!refused) continue;
      const next = await limited.request(path);
      expect(next.status).toBe(429);
      expect(Number(next.headers.get('retry-after'))).toBeGreaterThanOrEqual(REFILL_SEC - 1);
      return;
    }
    throw new Error(`${path} never refilled after its 429`);
  }

  it('npm run token and npm run pay wait out a 429 and its Retry-After instead of stopping (security review III, finding 7a)', async () => {
    await exhaustRightAfterRefill(`/v1/auth/login-payload?address=${devAccount.address}`);
    const token = await script('dev/token.ts', [], limitedStackFile);
    expect(token).toMatchObject({ code: 0, stdout: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+\n$/) });
    expect(token.stderr).toMatch(/GET \/v1\/auth\/login-payload answered 429: retrying in \d+ s/);
    expect((await profileOf(token.stdout.trim())).walletAddress).toBe(devAccount.address);

    await fundDevAccountOn(84532);
    const sessionId = await sandboxSessionOf(await newDevMerchant(), '1.5');
    await exhaustRightAfterRefill(`/v1/sessions/${sessionId}`);
    const paid = await script(
      'dev/pay.ts',
      [sessionId, '--symbol', 'USDT', '--chain', '84532'],
      limitedStackFile,
    );
    expect(paid.stderr).toMatch(new RegExp(`GET /v1/sessions/${sessionId} answered 429: retrying in \\d+ s`));
    expect(paid).toMatchObject({ code: 0, stdout: expect.stringContaining('paid 1.5 USDT on base-sepolia') });
  }, 150_000);
});
