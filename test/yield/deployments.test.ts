import type { Address } from 'viem';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * The yield-deployment routes (SPEC's table, docs/yield.md): every allowed transition and every refused one
 * with its status, the deploy workflow to `active` (vaults with code) and to `failed` (with the revert),
 * linking contract sets, and tenant isolation on every route.
 */

const BASE = '/v1/merchants/me/yield-deployments';
let world: YieldWorld;
let alice: SignedInMerchant;
let bob: SignedInMerchant;

beforeAll(async () => {
  // No redeploy back-off here: the failed path is deployed again at once (test/yield/deployLimits.test.ts holds it).
  world = await startYieldWorld({ env: { YIELD_REDEPLOY_BACKOFF_SEC: '0' } });
  alice = await signInNewMerchant(world.app);
  bob = await signInNewMerchant(world.app);
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

const call = (merchant: SignedInMerchant, method: string, path: string, json?: unknown) =>
  world.app.request(`${BASE}${path}`, {
    method,
    headers: merchant.auth,
    ...(json !== undefined && { json }),
  });

async function createDraft(merchant = alice, body: Record<string, unknown> = {}) {
  const created = await call(merchant, 'POST', '', { name: 'Acme Savings', chainId: YIELD_CHAIN, ...body });
  expect(created.status).toBe(201);
  return created.body;
}

async function waitForStatus(id: string, statuses: string[], merchant = alice) {
  return waitFor(
    async () => (await call(merchant, 'GET', `/${id}`)).body,
    (body) => statuses.includes(body.status),
  );
}

async function deployToActive(merchant = alice, body: Record<string, unknown> = {}) {
  const draft = await createDraft(merchant, body);
  const queued = await call(merchant, 'POST', `/${draft.id}/deploy`);
  expect(queued.status).toBe(202);
  return waitForStatus(draft.id, ['active', 'failed'], merchant);
}

const expectConflict = async (
  response: Promise<{ status: number; body: { message: string } }>,
  message: RegExp,
) => {
  const answered = await response;
  expect(answered.status).toBe(409);
  expect(answered.body.message).toMatch(message);
};

describe('deploy options', () => {
  it('names the factory and the permitted tokens of a chain', async () => {
    const options = await call(alice, 'GET', `/deploy-options?chainId=${YIELD_CHAIN}`);
    const contracts = testStack().chains.find((chain) => chain.chainId === YIELD_CHAIN)!.contracts;
    expect(options.status).toBe(200);
    expect(options.body).toEqual({
      chainId: YIELD_CHAIN,
      network: 'ethereum-sepolia',
      sandbox: true,
      vaultFactory: contracts.yieldVaultFactory,
      permittedTokens: [{ symbol: 'USDe', address: contracts.usde, decimals: 18 }],
    });
  });

  it('answers 400 for a missing or unsupported chain', async () => {
    for (const query of ['', '?chainId=', '?chainId=999', '?chainId=abc']) {
      const answered = await call(alice, 'GET', `/deploy-options${query}`);
      expect(answered.status).toBe(400);
      expect(answered.body.message).toMatch(/^Validation failed: chainId/);
    }
  });
});

describe('create, read, update', () => {
  it('creates a draft with every permitted token by default, and reads it back', async () => {
    const draft = await createDraft(alice, { branding: { displayName: 'Acme', primaryColor: '#AA0000' } });
    expect(draft).toEqual({
      id: expect.any(String),
      name: 'Acme Savings',
      chainId: YIELD_CHAIN,
      network: 'ethereum-sepolia',
      status: 'draft',
      tokens: ['USDe'],
      branding: { displayName: 'Acme', primaryColor: '#aa0000' },
      contractSetId: null,
      contracts: null,
      domains: [],
      failureReason: null,
      siteUrl: null,
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
      sunsetAt: null,
    });
    expect((await call(alice, 'GET', `/${draft.id}`)).body).toEqual(draft);
    const list = await call(alice, 'GET', '');
    expect(list.body.data.map((entry: { id: string }) => entry.id)).toContain(draft.id);
  });

  it('refuses bad input with 400 and writes nothing', async () => {
    const before = (await call(alice, 'GET', '')).body.data.length;
    const bad: Record<string, unknown>[] = [
      {},
      { name: '', chainId: YIELD_CHAIN },
      { name: 'x', chainId: 999 },
      { name: 'x', chainId: YIELD_CHAIN, tokens: ['USDC'] },
      { name: 'x', chainId: YIELD_CHAIN, tokens: [] },
      { name: 'x', chainId: YIELD_CHAIN, tokens: ['USDe', 'USDe'] },
      { name: 'x', chainId: YIELD_CHAIN, branding: { primaryColor: 'red' } },
      { name: 'x', chainId: YIELD_CHAIN, branding: { logoUrl: 'http://insecure.example/logo.png' } },
      { name: 'x', chainId: YIELD_CHAIN, branding: { font: 'Comic Sans' } },
      { name: 'x', chainId: YIELD_CHAIN, extra: true },
    ];
    for (const body of bad) {
      const answered = await call(alice, 'POST', '', body);
      expect([answered.status, body]).toEqual([400, body]);
      expect(answered.body.message).toMatch(/^Validation failed: /);
    }
    expect((await call(alice, 'GET', '')).body.data.length).toBe(before);
  });

  it('PATCH updates the name or the branding', async () => {
    const draft = await createDraft();
    const patched = await call(alice, 'PATCH', `/${draft.id}`, {
      name: 'Acme Yield',
      branding: { logoUrl: 'https://acme.example/logo.png', accentColor: '#00ff00' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'Acme Yield',
      branding: { logoUrl: 'https://acme.example/logo.png', accentColor: '#00ff00' },
    });
    expect((await call(alice, 'PATCH', `/${draft.id}`, {})).status).toBe(400);
    expect((await call(alice, 'PATCH', `/${draft.id}`, { chainId: 1 })).status).toBe(400);
  });
});

describe('the state machine', () => {
  it('draft → DELETE 204; gone afterwards', async () => {
    const draft = await createDraft();
    expect((await call(alice, 'DELETE', `/${draft.id}`)).status).toBe(204);
    expect((await call(alice, 'GET', `/${draft.id}`)).status).toBe(404);
    expect((await call(alice, 'DELETE', `/${draft.id}`)).status).toBe(404);
  });

  it('a draft cannot be sunset or returned from sunset (409)', async () => {
    const draft = await createDraft();
    await expectConflict(call(alice, 'POST', `/${draft.id}/sunset`), /is draft; sunsetting needs active/);
    await expectConflict(
      call(alice, 'DELETE', `/${draft.id}/sunset`),
      /is draft; un-sunsetting needs sunset/,
    );
  });

  it('draft → deploy 202 → deploying → active with vaults that hold code; then active ⇄ sunset', async () => {
    const draft = await createDraft();
    const queued = await call(alice, 'POST', `/${draft.id}/deploy`);
    expect(queued.status).toBe(202);
    expect(queued.body.status).toBe('deploying');
    // While deploying: every other transition is refused.
    const deploying = (await call(alice, 'GET', `/${draft.id}`)).body;
    if (deploying.status === 'deploying') {
      await expectConflict(
        call(alice, 'POST', `/${draft.id}/deploy`),
        /is deploying; deploying needs draft or failed/,
      );
      await expectConflict(call(alice, 'DELETE', `/${draft.id}`), /is deploying; deleting needs draft/);
      await expectConflict(call(alice, 'POST', `/${draft.id}/sunset`), /is deploying/);
    }

    const active = await waitForStatus(draft.id, ['active', 'failed']);
    expect(active.status).toBe('active');
    expect(active.contractSetId).toEqual(expect.any(String));
    expect(active.siteUrl).toBe(`${world.app.config.PUBLIC_BASE_URL}/sites/${draft.id}`);
    expect(active.contracts.vaults).toEqual([
      {
        symbol: 'USDe',
        asset: testStack().chains.find((chain) => chain.chainId === YIELD_CHAIN)!.contracts.usde,
        address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
        name: 'Acme Savings USDe Vault',
        shareSymbol: 'ACMEUSDe',
      },
    ]);
    const code = await world
      .publicClient(YIELD_CHAIN)
      .getCode({ address: active.contracts.vaults[0].address });
    expect(code?.length).toBeGreaterThan(100);

    // The workflow is findable by id on its own task queue, and ends with the deployment active.
    const handle = world.temporal.workflow.getHandle(`yield-deployment-${draft.id}`);
    await expect(handle.result()).resolves.toMatchObject({
      status: 'active',
      contractSetId: active.contractSetId,
    });
    const description = await handle.describe();
    expect(description.taskQueue).toBe(world.taskQueues.yield);
    expect(description.status.name).toBe('COMPLETED');

    await expectConflict(
      call(alice, 'POST', `/${draft.id}/deploy`),
      /is active; deploying needs draft or failed/,
    );
    await expectConflict(call(alice, 'DELETE', `/${draft.id}`), /is active; deleting needs draft/);
    await expectConflict(
      call(alice, 'DELETE', `/${draft.id}/sunset`),
      /is active; un-sunsetting needs sunset/,
    );

    const sunset = await call(alice, 'POST', `/${draft.id}/sunset`);
    expect(sunset.status).toBe(200);
    expect(sunset.body.status).toBe('sunset');
    expect(sunset.body.sunsetAt).toEqual(expect.stringMatching(/Z$/));
    await expectConflict(call(alice, 'POST', `/${draft.id}/sunset`), /is sunset; sunsetting needs active/);
    await expectConflict(call(alice, 'POST', `/${draft.id}/deploy`), /is sunset/);
    await expectConflict(call(alice, 'DELETE', `/${draft.id}`), /is sunset; deleting needs draft/);

    const back = await call(alice, 'DELETE', `/${draft.id}/sunset`);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ status: 'active', sunsetAt: null });
  });

  it('a reverting deployment ends failed with the reason; failed may be deployed again and becomes active', async () => {
    world.breakStakedVault(YIELD_CHAIN, true);
    let failed;
    try {
      failed = await deployToActive();
    } finally {
      world.breakStakedVault(YIELD_CHAIN, false);
    }
    expect(failed.status).toBe('failed');
    expect(failed.failureReason).toMatch(/^deployment reverted/);
    expect(failed.contracts).toBeNull();
    await expectConflict(call(alice, 'DELETE', `/${failed.id}`), /is failed; deleting needs draft/);
    await expectConflict(call(alice, 'POST', `/${failed.id}/sunset`), /is failed; sunsetting needs active/);
    await expectConflict(call(alice, 'DELETE', `/${failed.id}/sunset`), /is failed/);

    const again = await call(alice, 'POST', `/${failed.id}/deploy`);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ status: 'deploying', failureReason: null });
    const active = await waitForStatus(failed.id, ['active', 'failed']);
    expect(active.status).toBe('active');
  });
});

describe('contract sets', () => {
  let source: { id: string; contractSetId: string; contracts: { vaults: { address: Address }[] } };

  beforeAll(async () => {
    source = await deployToActive(alice, { name: 'Source' });
    expect(source).toMatchObject({ status: 'active' });
  }, 180_000);

  it('lists the merchant’s sets on a chain, and nobody else’s', async () => {
    const sets = await call(alice, 'GET', `/contract-sets?chainId=${YIELD_CHAIN}`);
    expect(sets.status).toBe(200);
    const mine = sets.body.data.find((set: { id: string }) => set.id === source.contractSetId);
    expect(mine).toEqual({
      id: source.contractSetId,
      chainId: YIELD_CHAIN,
      vaults: source.contracts.vaults,
      deployedAt: expect.stringMatching(/Z$/),
      txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect((await call(bob, 'GET', `/contract-sets?chainId=${YIELD_CHAIN}`)).body.data).toEqual([]);
    expect((await call(alice, 'GET', `/contract-sets?chainId=84532`)).body.data).toEqual([]);
    expect((await call(alice, 'GET', '/contract-sets')).status).toBe(400);
  });

  it('links an own set to an unconfigured draft, which becomes active with its vaults', async () => {
    const draft = await createDraft(alice, { name: 'Relaunch' });
    const linked = await call(alice, 'POST', `/${draft.id}/contracts`, {
      contractSetId: source.contractSetId,
    });
    expect(linked.status).toBe(200);
    expect(linked.body).toMatchObject({
      status: 'active',
      contractSetId: source.contractSetId,
      contracts: source.contracts,
    });
    await expectConflict(
      call(alice, 'POST', `/${draft.id}/contracts`, { contractSetId: source.contractSetId }),
      /is active; linking a contract set needs draft/,
    );
  });

  it('refuses another merchant’s set (404), a set on another chain (400) and a bad body (400)', async () => {
    const bobsDraft = await createDraft(bob);
    const refused = await call(bob, 'POST', `/${bobsDraft.id}/contracts`, {
      contractSetId: source.contractSetId,
    });
    expect(refused.status).toBe(404);
    expect(refused.body.message).toBe('Contract set not found');
    expect((await call(bob, 'GET', `/${bobsDraft.id}`)).body.status).toBe('draft');

    const otherChain = await createDraft(alice, { chainId: 84532 });
    const wrongChain = await call(alice, 'POST', `/${otherChain.id}/contracts`, {
      contractSetId: source.contractSetId,
    });
    expect(wrongChain.status).toBe(400);
    expect((await call(alice, 'POST', `/${otherChain.id}/contracts`, { contractSetId: 'nope' })).status).toBe(
      400,
    );
    expect((await call(alice, 'POST', `/${otherChain.id}/contracts`, {})).status).toBe(400);
  });
});

describe('tenant isolation', () => {
  it('every route answers 404 for another merchant’s deployment and changes nothing', async () => {
    const draft = await createDraft(alice, { name: 'Private' });
    const domain = await call(alice, 'POST', `/${draft.id}/domains`, {
      hostname: `private-${draft.id.slice(0, 8)}.example`,
    });
    expect(domain.status).toBe(201);
    const attempts: [string, string, unknown?][] = [
      ['GET', `/${draft.id}`],
      ['PATCH', `/${draft.id}`, { name: 'Stolen' }],
      ['DELETE', `/${draft.id}`],
      ['POST', `/${draft.id}/contracts`, { contractSetId: draft.id }],
      ['POST', `/${draft.id}/deploy`],
      ['POST', `/${draft.id}/sunset`],
      ['DELETE', `/${draft.id}/sunset`],
      ['POST', `/${draft.id}/domains`, { hostname: 'bob-steals.example' }],
      ['DELETE', `/${draft.id}/domains/${domain.body.id}`],
    ];
    for (const [method, path, body] of attempts) {
      const answered = await call(bob, method, path, body);
      expect([method, path, answered.status]).toEqual([method, path, 404]);
    }
    const list = await call(bob, 'GET', '');
    expect(list.body.data.map((entry: { id: string }) => entry.id)).not.toContain(draft.id);
    const after = (await call(alice, 'GET', `/${draft.id}`)).body;
    expect(after).toMatchObject({ name: 'Private', status: 'draft', domains: [{ id: domain.body.id }] });
  });

  it('an unknown or malformed id answers 404', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect((await call(alice, 'GET', `/${id}`)).status).toBe(404);
      expect((await call(alice, 'POST', `/${id}/deploy`)).status).toBe(404);
    }
  });

  it('every route answers 401 without a session', async () => {
    const draft = await createDraft();
    for (const [method, path] of [
      ['GET', `/deploy-options?chainId=${YIELD_CHAIN}`],
      ['GET', `/contract-sets?chainId=${YIELD_CHAIN}`],
      ['GET', ''],
      ['POST', ''],
      ['GET', `/${draft.id}`],
      ['POST', `/${draft.id}/deploy`],
    ] as const) {
      const answered = await world.app.request(`${BASE}${path}`, { method });
      expect([path, answered.status]).toEqual([path, 401]);
    }
  });
});

describe('custom domains', () => {
  it('attaches a pending domain with its TXT record; the hostname is stored lower-case, once per merchant while pending', async () => {
    const draft = await createDraft();
    const hostname = `Invest-${draft.id.slice(0, 8)}.Example.COM`;
    const attached = await call(alice, 'POST', `/${draft.id}/domains`, { hostname });
    expect(attached.status).toBe(201);
    const lower = hostname.toLowerCase();
    expect(attached.body).toEqual({
      id: expect.any(String),
      hostname: lower,
      status: 'pending',
      verification: {
        type: 'TXT',
        name: `_stablepay-verification.${lower}`,
        value: expect.stringMatching(/^stablepay-verification=[0-9a-f]{32}$/),
      },
      verifiedAt: null,
      createdAt: expect.stringMatching(/Z$/),
    });
    // A pending domain holds no hostname (security review II, finding 1): another merchant may attach it
    // too, and the first TXT proof wins; the same merchant may not attach it twice.
    const bobsDraft = await createDraft(bob);
    expect((await call(bob, 'POST', `/${bobsDraft.id}/domains`, { hostname: lower })).status).toBe(201);
    expect((await call(alice, 'POST', `/${draft.id}/domains`, { hostname: `${lower}.` })).status).toBe(409);

    expect((await call(alice, 'DELETE', `/${draft.id}/domains/${attached.body.id}`)).status).toBe(204);
    expect((await call(alice, 'DELETE', `/${draft.id}/domains/${attached.body.id}`)).status).toBe(404);
    expect((await call(alice, 'POST', `/${draft.id}/domains`, { hostname: lower })).status).toBe(201);
  });

  it('refuses what is not a DNS name with 400', async () => {
    const draft = await createDraft();
    for (const hostname of [
      '127.0.0.1',
      'shop.example:8443',
      'https://shop.example',
      'localhost',
      '-bad-.example',
      'a'.repeat(64) + '.example',
      '',
    ]) {
      const answered = await call(alice, 'POST', `/${draft.id}/domains`, { hostname });
      expect([hostname, answered.status]).toEqual([hostname, 400]);
    }
  });

  it('a TXT record set on the DNS server verifies the domain', async () => {
    const draft = await createDraft();
    const hostname = `verify-${draft.id.slice(0, 8)}.example`;
    const attached = (await call(alice, 'POST', `/${draft.id}/domains`, { hostname })).body;
    world.txtRecords.set(attached.verification.name, ['unrelated=1']);
    // A wrong value keeps it pending.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await call(alice, 'GET', `/${draft.id}`)).body.domains[0].status).toBe('pending');
    world.txtRecords.set(attached.verification.name, ['unrelated=1', attached.verification.value]);
    const verified = await waitFor(
      async () => (await call(alice, 'GET', `/${draft.id}`)).body.domains[0],
      (domain) => domain.status !== 'pending',
      60_000,
    );
    expect(verified).toMatchObject({ status: 'verified', verifiedAt: expect.stringMatching(/Z$/) });
  });
});
