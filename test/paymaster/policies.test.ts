import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { createPaymasterClient } from './paymasterApi';

/**
 * A paymaster client's sponsorship policies (issue 43, docs/paymaster.md "Sponsorship policies (issue 43)"): an ordered list under the client,
 * its default policy first; bad input answers 400 naming the field and saves nothing.
 */

const CONTRACT = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const FUTURE = '2099-01-01T00:00:00.000Z';
const LATER = '2099-02-01T00:00:00.000Z';

describe('paymaster policies routes (JWT)', () => {
  let app: TestApp;
  let publicOnlyApp: TestApp;
  let merchant: SignedInMerchant;
  let other: SignedInMerchant;
  beforeAll(async () => {
    [app, publicOnlyApp] = await Promise.all([
      startTestApp(),
      // A production-like deployment: event endpoints (and so approval webhooks) must be public.
      startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }),
    ]);
    [merchant, other] = await Promise.all([signInNewMerchant(app), signInNewMerchant(app)]);
  });
  afterAll(() => Promise.all([app.close(), publicOnlyApp.close()]));

  const call = (who: SignedInMerchant, method: string, path: string, json?: unknown, on: TestApp = app) =>
    on.request(path, { method, headers: who.auth, ...(json !== undefined && { json }) });
  const policiesOf = (clientId: string) => `/v1/paymaster/clients/${clientId}/policies`;
  const listPolicies = async (clientId: string) =>
    (await call(merchant, 'GET', policiesOf(clientId))).body.data as {
      id: string;
      name: string;
      position: number;
    }[];

  it('a new client has its default policy: every chain of the client, the shared allowlist, no window, no budget', async () => {
    const client = await createPaymasterClient(app, merchant, { allowedChainIds: [84532, 421614] });
    const response = await call(merchant, 'GET', policiesOf(client.id));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          clientId: client.id,
          name: 'Default policy',
          position: 0,
          chainIds: null,
          allowlist: null,
          startsAt: null,
          endsAt: null,
          budgets: [],
          approvalWebhook: null,
          createdAt: expect.stringMatching(/Z$/),
          updatedAt: expect.stringMatching(/Z$/),
        },
      ],
    });
  });

  it('create appends with every field, defaults filled in; read answers the same policy', async () => {
    const client = await createPaymasterClient(app, merchant, { allowedChainIds: [84532, 421614] });
    const created = await call(merchant, 'POST', policiesOf(client.id), {
      name: 'launch week',
      chainIds: [84532],
      allowlist: [{ chainId: 84532, contractAddress: CONTRACT, label: 'USDC' }],
      startsAt: FUTURE,
      endsAt: LATER,
      budgets: [
        { kind: 'usd', amount: '250.5', period: 'week', scope: 'policy' },
        { kind: 'operations', amount: '10', period: 'day', scope: 'sender' },
      ],
      approvalWebhook: { url: 'https://approvals.example.com/hook' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      clientId: client.id,
      name: 'launch week',
      position: 1,
      chainIds: [84532],
      allowlist: [
        { chainId: 84532, contractAddress: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', label: 'USDC' },
      ],
      startsAt: FUTURE,
      endsAt: LATER,
      budgets: [
        { kind: 'usd', amount: '250.5', period: 'week', scope: 'policy' },
        { kind: 'operations', amount: '10', period: 'day', scope: 'sender' },
      ],
      approvalWebhook: { url: 'https://approvals.example.com/hook', timeoutMs: 2000, onError: 'deny' },
    });
    // The approval signing secret is shown in this answer only.
    const { secret, ...webhookRead } = created.body.approvalWebhook;
    expect(secret).toMatch(/^whsec_/);
    const read = await call(merchant, 'GET', `${policiesOf(client.id)}/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ ...created.body, approvalWebhook: webhookRead });
  });

  it('PATCH changes rules, not the position; null restores every chain and the shared allowlist', async () => {
    const client = await createPaymasterClient(app, merchant);
    const created = await call(merchant, 'POST', policiesOf(client.id), {
      name: 'narrow',
      chainIds: [84532],
      allowlist: [{ chainId: 84532, contractAddress: CONTRACT }],
    });
    const path = `${policiesOf(client.id)}/${created.body.id}`;
    const patched = await call(merchant, 'PATCH', path, {
      name: 'wide',
      chainIds: null,
      allowlist: null,
      approvalWebhook: { url: 'https://approvals.example.com/x', timeoutMs: 5000, onError: 'allow' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'wide',
      position: 1,
      chainIds: null,
      allowlist: null,
      approvalWebhook: { url: 'https://approvals.example.com/x', timeoutMs: 5000, onError: 'allow' },
    });
    expect((await call(merchant, 'PATCH', path, { position: 0 })).status).toBe(400);
    expect((await call(merchant, 'PATCH', path, {})).status).toBe(400);
  });

  it('PUT order sets the order; it must name every policy once; DELETE moves the later ones up', async () => {
    const client = await createPaymasterClient(app, merchant);
    const [first] = await listPolicies(client.id);
    const second = (await call(merchant, 'POST', policiesOf(client.id), { name: 'second' })).body;
    const third = (await call(merchant, 'POST', policiesOf(client.id), { name: 'third' })).body;

    const reordered = await call(merchant, 'PUT', `${policiesOf(client.id)}/order`, {
      policyIds: [third.id, first!.id, second.id],
    });
    expect(reordered.status).toBe(200);
    expect(
      reordered.body.data.map((policy: { name: string; position: number }) => [policy.name, policy.position]),
    ).toEqual([
      ['third', 0],
      ['Default policy', 1],
      ['second', 2],
    ]);

    for (const policyIds of [
      [third.id, first!.id],
      [third.id, first!.id, second.id, second.id],
      [third.id, first!.id, third.id],
    ]) {
      const refused = await call(merchant, 'PUT', `${policiesOf(client.id)}/order`, { policyIds });
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([{ field: 'policyIds', message: expect.any(String) }]);
    }
    expect((await listPolicies(client.id)).map((policy) => policy.name)).toEqual([
      'third',
      'Default policy',
      'second',
    ]);

    expect((await call(merchant, 'DELETE', `${policiesOf(client.id)}/${first!.id}`)).status).toBe(204);
    expect((await call(merchant, 'DELETE', `${policiesOf(client.id)}/${first!.id}`)).status).toBe(404);
    expect((await listPolicies(client.id)).map((policy) => [policy.name, policy.position])).toEqual([
      ['third', 0],
      ['second', 1],
    ]);
  });

  it.each([
    ['a window in the past', { startsAt: '2020-01-01T00:00:00Z', endsAt: '2020-02-01T00:00:00Z' }, 'endsAt'],
    ['an end before its start', { startsAt: LATER, endsAt: FUTURE }, 'endsAt'],
    ['an end equal to its start', { startsAt: FUTURE, endsAt: FUTURE }, 'endsAt'],
    ['a window that is not a timestamp', { startsAt: 'tomorrow' }, 'startsAt'],
    [
      'a negative USD budget',
      { budgets: [{ kind: 'usd', amount: '-5', period: 'day', scope: 'policy' }] },
      'budgets.0.amount',
    ],
    [
      'a non-numeric USD budget',
      { budgets: [{ kind: 'usd', amount: 'ten', period: 'day', scope: 'policy' }] },
      'budgets.0.amount',
    ],
    [
      'a zero USD budget',
      { budgets: [{ kind: 'usd', amount: '0', period: 'day', scope: 'policy' }] },
      'budgets.0.amount',
    ],
    [
      'a USD budget as a float',
      { budgets: [{ kind: 'usd', amount: 1.5, period: 'day', scope: 'policy' }] },
      'budgets.0.amount',
    ],
    [
      'a negative operations budget',
      { budgets: [{ kind: 'operations', amount: '-1', period: 'week', scope: 'sender' }] },
      'budgets.0.amount',
    ],
    [
      'a fractional operations budget',
      { budgets: [{ kind: 'operations', amount: '1.5', period: 'week', scope: 'sender' }] },
      'budgets.0.amount',
    ],
    [
      'an unknown period',
      { budgets: [{ kind: 'usd', amount: '5', period: 'year', scope: 'policy' }] },
      'budgets.0.period',
    ],
    [
      'an unknown scope',
      { budgets: [{ kind: 'usd', amount: '5', period: 'day', scope: 'origin' }] },
      'budgets.0.scope',
    ],
    [
      'a repeated budget',
      {
        budgets: [
          { kind: 'usd', amount: '5', period: 'day', scope: 'policy' },
          { kind: 'usd', amount: '6', period: 'day', scope: 'policy' },
        ],
      },
      'budgets.1',
    ],
    [
      'an approval timeout above 5000 ms',
      { approvalWebhook: { url: 'https://a.example.com', timeoutMs: 5001 } },
      'approvalWebhook.timeoutMs',
    ],
    [
      'an approval onError that is neither deny nor allow',
      { approvalWebhook: { url: 'https://a.example.com', onError: 'retry' } },
      'approvalWebhook.onError',
    ],
    [
      'an approval URL that is not https',
      { approvalWebhook: { url: 'ftp://a.example.com' } },
      'approvalWebhook.url',
    ],
    ['a chain the client does not allow', { chainIds: [421614] }, 'chainIds.0'],
    [
      'an allowlist entry that is not an address',
      { allowlist: [{ chainId: 84532, contractAddress: '0x12' }] },
      'allowlist.0.contractAddress',
    ],
  ])('create with %s answers 400 naming the field and saves nothing', async (_case, rules, field) => {
    const client = await createPaymasterClient(app, merchant);
    const response = await call(merchant, 'POST', policiesOf(client.id), { name: 'bad', ...rules });
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/^Validation failed: /);
    expect(response.body.errors).toContainEqual({ field, message: expect.any(String) });
    expect((await listPolicies(client.id)).map((policy) => policy.name)).toEqual(['Default policy']);
  });

  it('PATCH with an end before the stored start answers 400 on endsAt and changes nothing', async () => {
    const client = await createPaymasterClient(app, merchant);
    const created = await call(merchant, 'POST', policiesOf(client.id), {
      name: 'windowed',
      startsAt: LATER,
    });
    const path = `${policiesOf(client.id)}/${created.body.id}`;
    const response = await call(merchant, 'PATCH', path, { name: 'renamed', endsAt: FUTURE });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ field: 'endsAt', message: 'must be after startsAt' }]);
    expect((await call(merchant, 'GET', path)).body).toMatchObject({ name: 'windowed', endsAt: null });
  });

  it('PATCHes racing on the two ends of a window never answer 500 nor store an empty window', async () => {
    const client = await createPaymasterClient(app, merchant);
    const created = await call(merchant, 'POST', policiesOf(client.id), {
      name: 'racing',
      startsAt: '2099-01-01T00:00:00.000Z',
      endsAt: '2099-04-01T00:00:00.000Z',
    });
    const path = `${policiesOf(client.id)}/${created.body.id}`;
    // Each alone is valid against the stored window; together the end would fall before the start.
    for (let round = 0; round < 10; round += 1) {
      const [later, earlier] = await Promise.all([
        call(merchant, 'PATCH', path, { startsAt: '2099-03-01T00:00:00.000Z' }),
        call(merchant, 'PATCH', path, { endsAt: '2099-02-01T00:00:00.000Z' }),
      ]);
      for (const answer of [later, earlier]) {
        expect([200, 400]).toContain(answer.status);
        if (answer.status === 400) expect(answer.body.errors[0].field).toMatch(/^(startsAt|endsAt)$/);
      }
      const stored = (await call(merchant, 'GET', path)).body as { startsAt: string; endsAt: string };
      expect(Date.parse(stored.startsAt)).toBeLessThan(Date.parse(stored.endsAt));
      await call(merchant, 'PATCH', path, {
        startsAt: '2099-01-01T00:00:00.000Z',
        endsAt: '2099-04-01T00:00:00.000Z',
      });
    }
  });

  it.each([
    ['a loopback address', 'https://127.0.0.1/approve'],
    ['a private network address', 'https://10.0.0.8/approve'],
    ['a link-local address', 'https://[fe80::1]/approve'],
  ])(
    'an approval URL on %s answers 400 where targets must be public, and saves nothing',
    async (_case, url) => {
      const owner = await signInNewMerchant(publicOnlyApp);
      const client = await createPaymasterClient(publicOnlyApp, owner);
      const response = await call(
        owner,
        'POST',
        policiesOf(client.id),
        { name: 'private', approvalWebhook: { url } },
        publicOnlyApp,
      );
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        {
          field: 'approvalWebhook.url',
          message: 'must not point to a private, loopback or link-local address',
        },
      ]);
      const list = await call(owner, 'GET', policiesOf(client.id), undefined, publicOnlyApp);
      expect(list.body.data).toHaveLength(1);
    },
  );

  it("another merchant's client or policy answers 404 to every route and stays untouched", async () => {
    const client = await createPaymasterClient(app, merchant);
    const [policy] = await listPolicies(client.id);
    const path = `${policiesOf(client.id)}/${policy!.id}`;
    expect((await call(other, 'GET', policiesOf(client.id))).status).toBe(404);
    expect((await call(other, 'POST', policiesOf(client.id), { name: 'intruder' })).status).toBe(404);
    expect((await call(other, 'GET', path)).status).toBe(404);
    expect((await call(other, 'PATCH', path, { name: 'stolen' })).status).toBe(404);
    expect((await call(other, 'DELETE', path)).status).toBe(404);
    expect(
      (await call(other, 'PUT', `${policiesOf(client.id)}/order`, { policyIds: [policy!.id] })).status,
    ).toBe(404);
    // A policy id of one client under another client of the same merchant is not found either.
    const sibling = await createPaymasterClient(app, merchant);
    expect((await call(merchant, 'GET', `${policiesOf(sibling.id)}/${policy!.id}`)).status).toBe(404);
    expect(await listPolicies(client.id)).toEqual([
      expect.objectContaining({ id: policy!.id, name: 'Default policy' }),
    ]);
  });

  it('a revoked client answers 404', async () => {
    const client = await createPaymasterClient(app, merchant);
    await call(merchant, 'DELETE', `/v1/paymaster/clients/${client.id}`);
    expect((await call(merchant, 'GET', policiesOf(client.id))).status).toBe(404);
    expect((await call(merchant, 'POST', policiesOf(client.id), { name: 'late' })).status).toBe(404);
  });
});
