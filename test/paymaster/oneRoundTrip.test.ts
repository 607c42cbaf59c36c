import { Client } from 'pg';
import { sql } from 'kysely';
import { type TestApp, startTestApp } from '../harness/app';
import { waitUntil } from '../harness/twoApiInstances';
import { type MainnetStandIn, startMainnetStandIn } from './mainnetStandIn';
import { addDenyRule, paymasterRpc } from './paymasterApi';
import { freshSender, merchantSponsoringTarget, signedDataRequest, TARGET } from './signedDataRequests';

/**
 * Issue 46, step 1: a signed answer takes one Postgres round trip. The decision reads (deny rules,
 * allowlist, the merchant's limits, the client's policies) come from a per-process cache of the merchant's
 * paymaster configuration that the triggers of migration 2026_11_29_0900 invalidate; the repeat of a
 * signed request is found by `record_signed_paymaster_operation`, which consumes the limits and inserts the
 * usage row. Statements are counted on the app's pool connections (pg's Client.query), leaving out the
 * listeners' connections (their heartbeats run on their own timer) and the service-wide request-rate leases (refilled in the background).
 */

const TESTNET = 84532;

let mainnet: MainnetStandIn;
let first: TestApp;
let second: TestApp;

beforeAll(async () => {
  mainnet = await startMainnetStandIn();
  [first, second] = await Promise.all([startTestApp(mainnet.appEnv), startTestApp(mainnet.appEnv)]);
});
afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
  await mainnet?.stop();
});

type Query = (this: Client, ...args: unknown[]) => unknown;

/** The LISTEN connections (caches, session revocations): their heartbeats are not the request's statements. */
const LISTENER_CONNECTION = /cache|revocations/;

/** The statements the app's pool sends while `action` runs (text of each). */
async function statementsDuring(action: () => Promise<unknown>): Promise<string[]> {
  const statements: string[] = [];
  const original = Client.prototype.query as unknown as Query;
  const counting: Query = function (this: Client, ...args) {
    const config = args[0];
    const text = typeof config === 'string' ? config : ((config as { text?: string })?.text ?? '');
    const applicationName = (this as unknown as { connectionParameters?: { application_name?: string } })
      .connectionParameters?.application_name;
    if (!LISTENER_CONNECTION.test(applicationName ?? '') && !text.includes('request_rate'))
      statements.push(text);
    return original.apply(this, args);
  };
  Client.prototype.query = counting as unknown as typeof Client.prototype.query;
  try {
    await action();
  } finally {
    Client.prototype.query = original as unknown as typeof Client.prototype.query;
  }
  return statements;
}

/** Requests with a fresh sender until the app answers from its configuration cache. */
async function warmUp(app: TestApp, clientId: string): Promise<void> {
  const signed = await paymasterRpc(app, clientId, signedDataRequest({ chainId: TESTNET }));
  expect(signed.body.result).toBeDefined();
  await waitUntil(() => app.paymasterConfigs!.stats().serving, 'the configuration cache listener');
  expect(
    (await paymasterRpc(app, clientId, signedDataRequest({ chainId: TESTNET }))).body.result,
  ).toBeDefined();
}

describe('issue 46: the signed answer in one Postgres round trip', () => {
  it('pm_getPaymasterData sends one statement, the recording; stub data one, the counters', async () => {
    const { clientId } = await merchantSponsoringTarget(first, TESTNET);
    await warmUp(first, clientId);
    const hits = first.paymasterConfigs!.stats().hits;

    let signed: Awaited<ReturnType<typeof paymasterRpc>> | undefined;
    const statements = await statementsDuring(async () => {
      signed = await paymasterRpc(first, clientId, signedDataRequest({ chainId: TESTNET }));
    });
    expect(signed!.body.result).toBeDefined();
    expect(statements).toEqual([expect.stringContaining('record_signed_paymaster_operation(')]);
    expect(first.paymasterConfigs!.stats().hits).toBe(hits + 1);

    const stub = signedDataRequest({ chainId: TESTNET, method: 'pm_getPaymasterStubData' });
    let stubAnswer: Awaited<ReturnType<typeof paymasterRpc>> | undefined;
    const stubStatements = await statementsDuring(async () => {
      stubAnswer = await paymasterRpc(first, clientId, stub);
    });
    expect(stubAnswer!.body.result).toBeDefined();
    expect(stubStatements).toHaveLength(1);
    expect(stubStatements[0]).toContain('paymaster_limit_counters');
  });

  it('a deny rule added through one instance denies there at once, and on the other once notified', async () => {
    const { merchant, clientId } = await merchantSponsoringTarget(first, TESTNET);
    await warmUp(first, clientId);
    await warmUp(second, clientId);
    const sender = freshSender();
    await addDenyRule(first, merchant, { chainId: TESTNET, kind: 'sender', address: sender });

    // The instance that made the change: at once (its route invalidated the merchant after the commit).
    const here = await paymasterRpc(first, clientId, signedDataRequest({ chainId: TESTNET, sender }));
    expect(here.body.error.message).toMatch(/^Policy denied: paymaster_blocked_by_merchant_rule/);
    // The other: by the trigger's notification.
    await waitUntilDenied(second, clientId, sender);
  });

  it('a change committed outside the api (no route to invalidate) reaches both instances by the trigger', async () => {
    const { merchant, clientId } = await merchantSponsoringTarget(first, TESTNET);
    await warmUp(first, clientId);
    await warmUp(second, clientId);
    await sql`DELETE FROM paymaster_allowlist_entries
      WHERE merchant_id = ${merchant.merchantId}::uuid AND contract_address = ${TARGET.toLowerCase()}`.execute(
      first.db,
    );
    for (const app of [first, second]) {
      await waitUntilAnswer(app, clientId, (body) =>
        /^Policy denied: paymaster_target_not_allowed/.test(body.error?.message ?? ''),
      );
    }
  });
});

async function waitUntilDenied(app: TestApp, clientId: string, sender: `0x${string}`): Promise<void> {
  await waitUntilAnswer(
    app,
    clientId,
    (body) => /^Policy denied: paymaster_blocked_by_merchant_rule/.test(body.error?.message ?? ''),
    sender,
  );
}

/** Sends signed-data requests (a fresh nonce each) until the answer satisfies `done`; 10 s at most. */
async function waitUntilAnswer(
  app: TestApp,
  clientId: string,
  done: (body: { error?: { message: string } }) => boolean,
  sender: `0x${string}` = freshSender(),
): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (let nonce = 1; ; nonce += 1) {
    const response = await paymasterRpc(
      app,
      clientId,
      signedDataRequest({ chainId: TESTNET, sender, nonce }),
    );
    if (done(response.body)) return;
    if (Date.now() > deadline) throw new Error(`no such answer within 10 s: ${response.text}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
