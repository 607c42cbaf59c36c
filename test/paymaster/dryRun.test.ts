import { sql } from 'kysely';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { answerJson, startApprovalReceiver, type ApprovalReceiver } from './approvalReceiver';
import { addDenyRule, createPaymasterClient, paymasterRpc, type CreatedClient } from './paymasterApi';
import { TARGET, freshSender, manualClock, signedDataRequest } from './signedDataRequests';

/**
 * The dry run (issue 43, item 3): `pm_validateSponsorshipPolicies` answers the policies that would
 * sponsor an operation now, in Pimlico's shape, and the dashboard's check says why each other one would
 * not. Every rule runs; nothing is consumed, held or recorded; each client has a budget of dry runs.
 */

const CHAIN = 84532;
const HOUR_MS = 3600 * 1000;
const OTHER_CONTRACT = '0x2000000000000000000000000000000000000002';
const own = [{ chainId: CHAIN, contractAddress: TARGET }];

describe('paymaster dry run (pm_validateSponsorshipPolicies)', () => {
  const clock = manualClock(new Date().toISOString());
  let app: TestApp;
  let merchant: SignedInMerchant;
  let receiver: ApprovalReceiver;
  beforeAll(async () => {
    receiver = await startApprovalReceiver();
    app = await startTestApp({}, { now: clock.now });
    merchant = await signInNewMerchant(app);
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });
  afterEach(() => clock.set(new Date().toISOString()));

  const policiesOf = (clientId: string) => `/v1/paymaster/clients/${clientId}/policies`;
  const addPolicy = async (
    client: CreatedClient,
    body: Record<string, unknown>,
    on = app,
    who = merchant,
  ) => {
    const response = await on.request(policiesOf(client.id), {
      method: 'POST',
      headers: who.auth,
      json: body,
    });
    if (response.status !== 201)
      throw new Error(`policy create answered ${response.status}: ${response.text}`);
    return response.body as { id: string; name: string };
  };
  const dryRun = (
    client: CreatedClient,
    options: { sender?: `0x${string}`; policyIds?: string[] } = {},
    on = app,
  ) => {
    const request = signedDataRequest({ method: 'pm_validateSponsorshipPolicies', sender: options.sender });
    return paymasterRpc(on, client.clientId, {
      ...request,
      params: [...request.params, ...(options.policyIds ? [options.policyIds] : [])],
    });
  };
  const dashboardCheck = (client: CreatedClient, sender = freshSender(), on = app, who = merchant) => {
    const [userOperation, entryPoint, chainId] = signedDataRequest({ sender }).params;
    return on.request(`${policiesOf(client.id)}/dry-run`, {
      method: 'POST',
      headers: who.auth,
      json: { userOperation, entryPoint, chainId },
    });
  };

  it('lists every policy that would sponsor now, in order and in Pimlico’s shape; the dashboard says why the others would not', async () => {
    const client = await createPaymasterClient(app, merchant);
    // The default policy: the merchant's shared allowlist, empty: an allowlist miss.
    const windowed = await addPolicy(client, {
      name: 'launch hour',
      allowlist: own,
      endsAt: new Date(clock.now().getTime() + HOUR_MS).toISOString(),
    });
    const other = await addPolicy(client, {
      name: 'other contract',
      allowlist: [{ chainId: CHAIN, contractAddress: OTHER_CONTRACT }],
    });
    const spent = await addPolicy(client, {
      name: 'one operation ever',
      allowlist: own,
      budgets: [{ kind: 'operations', amount: '1', period: 'lifetime', scope: 'policy' }],
    });
    const open = await addPolicy(client, { name: 'open', allowlist: own });

    const response = await dryRun(client);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: [
        { sponsorshipPolicyId: windowed.id, data: { name: 'launch hour' } },
        { sponsorshipPolicyId: spent.id, data: { name: 'one operation ever' } },
        { sponsorshipPolicyId: open.id, data: { name: 'open' } },
      ],
    });
    // Only the policies asked for.
    expect((await dryRun(client, { policyIds: [open.id, other.id] })).body.result).toEqual([
      { sponsorshipPolicyId: open.id, data: { name: 'open' } },
    ]);

    // Spend the one-operation budget (first match: the windowed policy sponsors until the window is past).
    clock.advance(HOUR_MS / 1000);
    const signed = await paymasterRpc(app, client.clientId, signedDataRequest());
    expect(signed.body.result).toBeDefined();

    expect((await dryRun(client)).body.result).toEqual([
      { sponsorshipPolicyId: open.id, data: { name: 'open' } },
    ]);
    const check = await dashboardCheck(client);
    expect(check.status).toBe(200);
    expect(check.body).toEqual({
      wouldSponsor: { policyId: open.id, name: 'open' },
      refusal: null,
      policies: [
        {
          policyId: expect.any(String),
          name: 'Default policy',
          sponsors: false,
          reason: `paymaster_target_not_allowed: call 0: target ${TARGET} is not on the contract allowlist for chain ${CHAIN}`,
          asksApproval: false,
        },
        {
          policyId: windowed.id,
          name: 'launch hour',
          sponsors: false,
          reason: expect.stringMatching(/^the policy does not apply: its window closed at /),
          asksApproval: false,
        },
        {
          policyId: other.id,
          name: 'other contract',
          sponsors: false,
          reason: `paymaster_target_not_allowed: call 0: target ${TARGET} is not on the contract allowlist for chain ${CHAIN}`,
          asksApproval: false,
        },
        {
          policyId: spent.id,
          name: 'one operation ever',
          sponsors: false,
          reason: expect.stringMatching(
            /^paymaster_rate_limit_exceeded: policy "one operation ever" reached its budget of 1 operations over its lifetime/,
          ),
          asksApproval: false,
        },
        { policyId: open.id, name: 'open', sponsors: true, reason: null, asksApproval: false },
      ],
    });
  });

  it('a deny rule refuses the operation under every policy: an empty result, and the refusal named', async () => {
    const client = await createPaymasterClient(app, merchant);
    await addPolicy(client, { name: 'open', allowlist: own });
    const sender = freshSender();
    await addDenyRule(app, merchant, { chainId: CHAIN, kind: 'sender', address: sender });
    expect((await dryRun(client, { sender })).body.result).toEqual([]);
    const check = await dashboardCheck(client, sender);
    expect(check.body.wouldSponsor).toBeNull();
    expect(check.body.refusal).toMatch(/^paymaster_blocked_by_merchant_rule: /);
    expect(check.body.policies.every((policy: { sponsors: boolean }) => !policy.sponsors)).toBe(true);
  });

  it('consumes nothing: budget counters, holds and usage rows are unchanged, and the approval webhook is not asked', async () => {
    receiver.answerWith(answerJson(200, { sponsor: true }));
    const owner = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, owner);
    const budgeted = await addPolicy(
      client,
      {
        name: 'budgeted',
        allowlist: own,
        budgets: [
          { kind: 'usd', amount: '100', period: 'day', scope: 'policy' },
          { kind: 'operations', amount: '5', period: 'week', scope: 'sender' },
        ],
        approvalWebhook: { url: receiver.url },
      },
      app,
      owner,
    );
    // One signed operation, so the counters exist and have something to keep.
    const sender = freshSender();
    expect(
      (await paymasterRpc(app, client.clientId, signedDataRequest({ sender }))).body.result,
    ).toBeDefined();
    const state = async () => ({
      counters: await app.db
        .selectFrom('paymaster_limit_counters')
        .select(['counter_key', 'window_start', 'used', 'held'])
        .where((eb) =>
          eb.or([
            eb('counter_key', 'like', `policy_budget:${budgeted.id}:%`),
            eb('counter_key', 'like', `%${client.clientId}%`),
            eb('counter_key', 'like', `%${sender.toLowerCase()}%`),
          ]),
        )
        .orderBy('counter_key')
        .execute(),
      holds: Number(
        (
          await sql<{ count: string }>`SELECT count(*) AS count FROM paymaster_operation_holds
            WHERE ${`policy_budget:${budgeted.id}:usd:day:policy`} = ANY(counter_keys)`.execute(app.db)
        ).rows[0]!.count,
      ),
      usage: await app.db
        .selectFrom('paymaster_usage')
        .select(['status', 'policy_id'])
        .where('merchant_id', '=', owner.merchantId)
        .execute(),
      malformed: await app.db
        .selectFrom('paymaster_malformed_requests')
        .selectAll()
        .where('merchant_id', '=', owner.merchantId)
        .execute(),
    });
    const before = await state();
    expect(before.counters.length).toBeGreaterThanOrEqual(2);
    expect(before.usage).toHaveLength(1);
    const asked = receiver.received.length;

    for (let round = 0; round < 5; round += 1) {
      expect((await dryRun(client, { sender })).body.result).toEqual([
        { sponsorshipPolicyId: budgeted.id, data: { name: 'budgeted' } },
      ]);
    }
    const check = await dashboardCheck(client, sender, app, owner);
    expect(
      check.body.policies.find((policy: { policyId: string }) => policy.policyId === budgeted.id),
    ).toMatchObject({
      sponsors: true,
      asksApproval: true,
    });
    expect(await state()).toEqual(before);
    expect(receiver.received.length).toBe(asked);
  });

  it('malformed params answer the JSON-RPC error (dashboard: 400 naming the field); another merchant’s client is 404', async () => {
    const client = await createPaymasterClient(app, merchant);
    const request = signedDataRequest({ method: 'pm_validateSponsorshipPolicies' });
    const badSender = await paymasterRpc(app, client.clientId, {
      ...request,
      params: [{ ...(request.params[0] as object), sender: 'nobody' }, request.params[1], request.params[2]],
    });
    expect(badSender.body.error).toEqual({
      code: -32602,
      message: 'Invalid params: userOp.sender must be an address',
    });
    const badIds = await paymasterRpc(app, client.clientId, {
      ...request,
      params: [...request.params, 'all'],
    });
    expect(badIds.body.error.code).toBe(-32602);

    const [userOperation, entryPoint, chainId] = request.params;
    const dashboard = await app.request(`${policiesOf(client.id)}/dry-run`, {
      method: 'POST',
      headers: merchant.auth,
      json: { userOperation: { ...(userOperation as object), nonce: 'soon' }, entryPoint, chainId },
    });
    expect(dashboard.status).toBe(400);
    expect(dashboard.body.errors).toEqual([
      { field: 'userOperation.nonce', message: 'must be readable as an integer' },
    ]);

    const stranger = await signInNewMerchant(app);
    const foreign = await app.request(`${policiesOf(client.id)}/dry-run`, {
      method: 'POST',
      headers: stranger.auth,
      json: { userOperation, entryPoint, chainId },
    });
    expect(foreign.status).toBe(404);
  });

  it('each client has a budget of dry runs, shared by the RPC and the dashboard: past it, the rate-limit error', async () => {
    // One a minute: the second within the minute is refused (the bucket refills one per 60 s).
    const limited = await startTestApp({ PAYMASTER_DRY_RUNS_PER_CLIENT_PER_MINUTE: '1' });
    try {
      const owner = await signInNewMerchant(limited);
      const client = await createPaymasterClient(limited, owner);
      expect(Array.isArray((await dryRun(client, {}, limited)).body.result)).toBe(true);
      expect((await dryRun(client, {}, limited)).body.error).toEqual({
        code: -32600,
        message: expect.stringMatching(
          /^Policy denied: paymaster_rate_limit_exceeded \(dry runs: 1 per minute per client; retry after \d+ s\)$/,
        ),
      });
      const dashboard = await dashboardCheck(client, freshSender(), limited, owner);
      expect(dashboard.status).toBe(429);
      expect(dashboard.headers.get('retry-after')).toMatch(/^\d+$/);
      // Another client's dry runs are its own; signing is not a dry run and is not refused for it.
      const other = await createPaymasterClient(limited, owner);
      expect(Array.isArray((await dryRun(other, {}, limited)).body.result)).toBe(true);
      const signing = await paymasterRpc(limited, client.clientId, signedDataRequest());
      expect(signing.body.error?.message ?? '').not.toMatch(/dry runs/);
    } finally {
      await limited.close();
    }
  });
});
