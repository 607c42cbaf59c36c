import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { allowContract, createPaymasterClient, paymasterRpc, usageRows } from './paymasterApi';
import { TARGET, manualClock, signedDataRequest } from './signedDataRequests';

/**
 * First match wins (issue 43): a client's policies are tried in their order; the first whose chains,
 * window and allowlist all pass sponsors, and the usage row names it. Reordering only changes which
 * policy sponsors: an operation every policy refuses stays refused in every order.
 */

const CHAIN = 84532;
const OTHER_CHAIN = 421614;
const HOUR = 3600;

describe('paymaster policies: first match wins', () => {
  const clock = manualClock(new Date().toISOString());
  let app: TestApp;
  let merchant: SignedInMerchant;
  beforeAll(async () => {
    app = await startTestApp({}, { now: clock.now });
    merchant = await signInNewMerchant(app);
  });
  afterAll(() => app.close());
  afterEach(() => clock.set(new Date().toISOString()));

  const call = (method: string, path: string, json?: unknown, who: SignedInMerchant = merchant) =>
    app.request(path, { method, headers: who.auth, ...(json !== undefined && { json }) });
  const policiesOf = (clientId: string) => `/v1/paymaster/clients/${clientId}/policies`;
  const addPolicy = async (clientId: string, body: Record<string, unknown>, who = merchant) => {
    const response = await call('POST', policiesOf(clientId), body, who);
    if (response.status !== 201)
      throw new Error(`policy create answered ${response.status}: ${response.text}`);
    return response.body as { id: string; name: string };
  };
  const defaultPolicyOf = async (clientId: string, who = merchant) =>
    ((await call('GET', policiesOf(clientId), undefined, who)).body.data as { id: string }[])[0]!;
  const setOrder = async (clientId: string, policyIds: string[]) => {
    const response = await call('PUT', `${policiesOf(clientId)}/order`, { policyIds });
    if (response.status !== 200) throw new Error(`order answered ${response.status}: ${response.text}`);
  };
  const stubData = (clientId: string, chainId = CHAIN) =>
    paymasterRpc(app, clientId, signedDataRequest({ method: 'pm_getPaymasterStubData', chainId }));
  const ownAllowlist = (chainId = CHAIN) => [{ chainId, contractAddress: TARGET }];

  it('the default policy sponsors what the shared allowlist allows, and the usage row names it', async () => {
    const owner = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, owner);
    await allowContract(app, owner, CHAIN, TARGET);
    const response = await paymasterRpc(app, client.clientId, signedDataRequest());
    expect(response.body.result).toBeDefined();
    const policies = await app.request(policiesOf(client.id), { headers: owner.auth });
    const [row] = await usageRows(app, owner);
    expect(row).toMatchObject({ status: 'submitted', policyId: policies.body.data[0].id });
  });

  it('a later policy sponsors what the first refuses; reordering two that both pass changes which one is named', async () => {
    const client = await createPaymasterClient(app, merchant);
    const defaultPolicy = await defaultPolicyOf(client.id);
    const own = await addPolicy(client.id, { name: 'own allowlist', allowlist: ownAllowlist() });

    // The merchant's shared allowlist does not hold the target: the default policy refuses, the second sponsors.
    const first = await paymasterRpc(app, client.clientId, signedDataRequest({ nonce: 1 }));
    expect(first.body.result).toBeDefined();
    expect((await usageRows(app, merchant))[0]).toMatchObject({ status: 'submitted', policyId: own.id });

    // Now both pass: the first in order sponsors.
    await allowContract(app, merchant, CHAIN, TARGET);
    await paymasterRpc(app, client.clientId, signedDataRequest({ nonce: 2 }));
    expect((await usageRows(app, merchant))[0]).toMatchObject({
      status: 'submitted',
      policyId: defaultPolicy.id,
    });
    await setOrder(client.id, [own.id, defaultPolicy.id]);
    await paymasterRpc(app, client.clientId, signedDataRequest({ nonce: 3 }));
    expect((await usageRows(app, merchant))[0]).toMatchObject({ status: 'submitted', policyId: own.id });
  });

  it('a policy applies only on its chains', async () => {
    const owner = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, owner, { allowedChainIds: [CHAIN, OTHER_CHAIN] });
    const [policy] = (await app.request(policiesOf(client.id), { headers: owner.auth })).body.data;
    const patched = await app.request(`${policiesOf(client.id)}/${policy.id}`, {
      method: 'PATCH',
      headers: owner.auth,
      json: { chainIds: [OTHER_CHAIN], allowlist: [...ownAllowlist(CHAIN), ...ownAllowlist(OTHER_CHAIN)] },
    });
    expect(patched.status).toBe(200);
    expect((await stubData(client.clientId, OTHER_CHAIN)).body.result).toBeDefined();
    expect((await stubData(client.clientId, CHAIN)).body.error).toEqual({
      code: -32602,
      message: `Policy denied: paymaster_target_not_allowed: no sponsorship policy of this client covers chain ${CHAIN} now`,
    });
  });

  it('a policy sponsors only inside its window: from startsAt, until endsAt (excluded)', async () => {
    const owner = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, owner);
    const startsAt = new Date(clock.now().getTime() + HOUR * 1000);
    const endsAt = new Date(startsAt.getTime() + HOUR * 1000);
    const created = await app.request(policiesOf(client.id), {
      method: 'POST',
      headers: owner.auth,
      json: { name: 'launch hour', allowlist: ownAllowlist(), startsAt, endsAt },
    });
    expect(created.status).toBe(201);
    // Outside the window the default policy (an empty shared allowlist) is the first that applies: its refusal answers.
    const refusal =
      /^Policy denied: paymaster_target_not_allowed: call 0: target .* is not on the contract allowlist/;

    expect((await stubData(client.clientId)).body.error.message).toMatch(refusal);
    clock.set(startsAt.toISOString());
    expect((await stubData(client.clientId)).body.result).toBeDefined();
    clock.advance(HOUR - 1);
    expect((await stubData(client.clientId)).body.result).toBeDefined();
    clock.advance(1);
    expect((await stubData(client.clientId)).body.error.message).toMatch(refusal);
  });

  it('reordering never sponsors an operation every policy refuses', async () => {
    const owner = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, owner, { allowedChainIds: [CHAIN, OTHER_CHAIN] });
    const later = new Date(clock.now().getTime() + 24 * HOUR * 1000).toISOString();
    // Each refuses the operation for its own reason; the shared allowlist (the default policy's) is empty.
    const refusing = [
      (await defaultPolicyOf(client.id, owner)).id,
      (
        await addPolicy(
          client.id,
          {
            name: 'another chain',
            chainIds: [OTHER_CHAIN],
            allowlist: ownAllowlist(OTHER_CHAIN),
          },
          owner,
        )
      ).id,
      (await addPolicy(client.id, { name: 'not yet', allowlist: ownAllowlist(), startsAt: later }, owner)).id,
      (
        await addPolicy(
          client.id,
          {
            name: 'other contract',
            allowlist: [{ chainId: CHAIN, contractAddress: '0x2000000000000000000000000000000000000002' }],
          },
          owner,
        )
      ).id,
    ];
    const orders = permutations(refusing);
    expect(orders).toHaveLength(24);
    for (const [index, order] of orders.entries()) {
      await app.request(`${policiesOf(client.id)}/order`, {
        method: 'PUT',
        headers: owner.auth,
        json: { policyIds: order },
      });
      const response = await paymasterRpc(app, client.clientId, signedDataRequest({ nonce: index }));
      expect(response.body.result).toBeUndefined();
      expect(response.body.error).toEqual({
        code: -32602,
        message: expect.stringMatching(
          /^Policy denied: paymaster_target_not_allowed: call 0: target 0x1000000000000000000000000000000000000001 is not on the contract allowlist for chain 84532$/,
        ),
      });
    }
    const rows = await usageRows(app, owner);
    expect(rows).toHaveLength(24);
    expect(rows.every((row) => row.status === 'denied_target' && row.policyId === null)).toBe(true);
  });

  it('a client whose policies were all deleted sponsors nothing', async () => {
    const owner = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, owner);
    await allowContract(app, owner, CHAIN, TARGET);
    const [policy] = (await app.request(policiesOf(client.id), { headers: owner.auth })).body.data;
    await app.request(`${policiesOf(client.id)}/${policy.id}`, { method: 'DELETE', headers: owner.auth });
    const response = await paymasterRpc(app, client.clientId, signedDataRequest());
    expect(response.body.error).toEqual({
      code: -32602,
      message: `Policy denied: paymaster_target_not_allowed: no sponsorship policy of this client covers chain ${CHAIN} now`,
    });
    expect((await usageRows(app, owner))[0]).toMatchObject({
      status: 'denied_target',
      reason: 'no_policy_applies',
    });
  });
});

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]),
  );
}
