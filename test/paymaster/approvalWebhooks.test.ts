import { createServer } from 'node:http';
import { sql } from 'kysely';
import { getAddress } from 'viem';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { computeWebhookSignature } from '../../webhooks/signWebhookPayload';
import {
  answerJson,
  startApprovalReceiver,
  startSigningRelay,
  type ApprovalReceiver,
  type SigningRelay,
} from './approvalReceiver';
import { createPaymasterClient, paymasterRpc, usageRows, type CreatedClient } from './paymasterApi';
import { TARGET, freshSender, signedDataRequest } from './signedDataRequests';

/**
 * Approval webhooks (issue 43, item 2): before signing for a policy with one, the paymaster POSTs the
 * operation to the merchant's receiver, signed like our events, and signs only on `{ sponsor: true }`.
 * A refusal answers the caller with the receiver's reason; an error, a timeout, garbage, a redirect or a
 * refused connection answers as the policy's onError says. Nothing is signed before the answer (a relay
 * in front of the signing service counts its requests) and a refusal holds no budget.
 */

const CHAIN = 84532;
const REFUSAL = 'Policy denied: paymaster_blocked_by_merchant_rule: the approval webhook of policy';

describe('paymaster approval webhooks', () => {
  let app: TestApp;
  let publicOnlyApp: TestApp;
  let merchant: SignedInMerchant;
  let receiver: ApprovalReceiver;
  let relay: SigningRelay;
  beforeAll(async () => {
    relay = await startSigningRelay(testStack().signer.url);
    receiver = await startApprovalReceiver(relay);
    app = await startTestApp({ SIGNER_URL: relay.url });
    publicOnlyApp = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', SIGNER_URL: relay.url });
    merchant = await signInNewMerchant(app);
  });
  afterAll(async () => {
    await Promise.all([app?.close(), publicOnlyApp?.close()]);
    await receiver?.close();
    await relay?.close();
  });

  const policiesOf = (clientId: string) => `/v1/paymaster/clients/${clientId}/policies`;
  /** A client whose only policy (its default one, patched) allows TARGET and has `rules`; its id and secret. */
  const clientWithPolicy = async (rules: Record<string, unknown>, on: TestApp = app, who = merchant) => {
    const client = await createPaymasterClient(on, who);
    const [policy] = (await on.request(policiesOf(client.id), { headers: who.auth })).body.data;
    const patched = await on.request(`${policiesOf(client.id)}/${policy.id}`, {
      method: 'PATCH',
      headers: who.auth,
      json: { name: 'approved ops', allowlist: [{ chainId: CHAIN, contractAddress: TARGET }], ...rules },
    });
    if (patched.status !== 200) throw new Error(`policy patch answered ${patched.status}: ${patched.text}`);
    return { client, policyId: policy.id as string, secret: patched.body.approvalWebhook?.secret as string };
  };
  const webhook = (extra: Record<string, unknown> = {}) => ({
    approvalWebhook: { url: receiver.url, ...extra },
  });
  const sign = (client: CreatedClient, nonce = 0, sender = freshSender()) =>
    paymasterRpc(app, client.clientId, signedDataRequest({ nonce, sender }));

  it('approves: the request is signed like an event, carries the operation, and the signature follows the answer', async () => {
    receiver.answerWith(answerJson(200, { sponsor: true }));
    const { client, policyId, secret } = await clientWithPolicy(webhook());
    expect(secret).toMatch(/^whsec_/);
    const sender = freshSender();
    const signingBefore = relay.requests.length;
    const arrivedBefore = receiver.received.length;

    const response = await sign(client, 0, sender);
    expect(response.body.result).toBeDefined();

    const approval = receiver.received[arrivedBefore]!;
    expect(approval.body).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f-]{36}$/),
      type: 'sponsorship.approval',
      data: {
        clientId: client.id,
        policyId,
        chainId: CHAIN,
        sender: getAddress(sender),
        calls: [{ to: TARGET, value: '0', data: '0x' }],
        estimatedUsd: '3.357764',
      },
    });
    expect(approval.headers['x-service-event-id']).toBe(approval.body.id);
    const [, timestamp, signature] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(
      approval.headers['x-service-signature'] as string,
    )!;
    expect(signature).toBe(computeWebhookSignature(approval.rawBody, secret, Number(timestamp)));
    // Nothing was signed while the receiver was asked; one signature once it approved.
    expect(approval.signingRequestsBefore).toBe(signingBefore);
    expect(relay.requests.length).toBe(signingBefore + 1);
    expect((await usageRows(app, merchant))[0]).toMatchObject({ status: 'submitted', policyId });
  });

  it('refuses with a reason: the caller reads it, nothing is signed, the budget holds nothing, and no later policy is tried', async () => {
    receiver.answerWith(answerJson(200, { sponsor: false, reason: 'sender is\nnot verified' }));
    const { client, policyId } = await clientWithPolicy({
      ...webhook(),
      budgets: [
        { kind: 'usd', amount: '100', period: 'day', scope: 'policy' },
        { kind: 'operations', amount: '10', period: 'week', scope: 'policy' },
      ],
    });
    // A second policy that would sponsor the same operation without asking anyone.
    const fallback = await app.request(policiesOf(client.id), {
      method: 'POST',
      headers: merchant.auth,
      json: { name: 'fallback', allowlist: [{ chainId: CHAIN, contractAddress: TARGET }] },
    });
    expect(fallback.status).toBe(201);
    const signingBefore = relay.requests.length;

    const response = await sign(client);
    expect(response.body.error).toEqual({
      code: -32600,
      message: `${REFUSAL} "approved ops" refused the operation: sender is not verified`,
    });
    expect(relay.requests.length).toBe(signingBefore);
    expect((await usageRows(app, merchant))[0]).toMatchObject({
      status: 'denied_merchant_rule',
      reason: 'approval_refused',
      policyId,
    });
    const counters = await app.db
      .selectFrom('paymaster_limit_counters')
      .select(['counter_key', 'used', 'held'])
      .where('counter_key', 'like', `policy_budget:${policyId}:%`)
      .execute();
    expect(counters.every((counter) => counter.used === '0' && counter.held === '0')).toBe(true);
    const holds = await app.db
      .selectFrom('paymaster_operation_holds')
      .select('hold_id')
      .where(sql<boolean>`${`policy_budget:${policyId}:usd:day:policy`} = ANY(counter_keys)`)
      .execute();
    expect(holds).toEqual([]);
  });

  it('reordering never sponsors an operation every policy refuses, a refusing receiver among them', async () => {
    receiver.answerWith(answerJson(200, { sponsor: false, reason: 'no' }));
    const { client, policyId } = await clientWithPolicy(webhook());
    const other = await app.request(policiesOf(client.id), {
      method: 'POST',
      headers: merchant.auth,
      json: {
        name: 'other contract',
        allowlist: [{ chainId: CHAIN, contractAddress: '0x2000000000000000000000000000000000000002' }],
      },
    });
    expect(other.status).toBe(201);
    const signingBefore = relay.requests.length;
    for (const [index, order] of [
      [policyId, other.body.id],
      [other.body.id, policyId],
    ].entries()) {
      const reordered = await app.request(`${policiesOf(client.id)}/order`, {
        method: 'PUT',
        headers: merchant.auth,
        json: { policyIds: order },
      });
      expect(reordered.status).toBe(200);
      const response = await sign(client, index);
      expect(response.body.result).toBeUndefined();
      expect(response.body.error.message).toBe(`${REFUSAL} "approved ops" refused the operation: no`);
    }
    expect(relay.requests.length).toBe(signingBefore);
  });

  it('a receiver that does not answer in time: denied within the timeout with onError deny, sponsored with onError allow', async () => {
    receiver.answerWith(() => undefined); // holds every request open
    const denying = await clientWithPolicy(webhook({ timeoutMs: 300 }));
    const allowing = await clientWithPolicy(webhook({ timeoutMs: 300, onError: 'allow' }));
    const signingBefore = relay.requests.length;
    const arrivedBefore = receiver.received.length;

    const denied = await sign(denying.client);
    expect(denied.body.error).toEqual({
      code: -32600,
      message: `${REFUSAL} "approved ops" did not answer (no complete answer within 300 ms); the policy denies on error`,
    });
    expect(relay.requests.length).toBe(signingBefore);
    expect((await usageRows(app, merchant))[0]).toMatchObject({ reason: 'approval_unavailable' });

    const allowed = await sign(allowing.client);
    expect(allowed.body.result).toBeDefined();
    expect(relay.requests.length).toBe(signingBefore + 1);
    // Both receivers were asked and neither has answered (still held open): the timeout decided.
    expect(receiver.received.length).toBe(arrivedBefore + 2);
    expect(receiver.received[arrivedBefore + 1]!.signingRequestsBefore).toBe(signingBefore);
  });

  it.each([
    ['a body that is not JSON', answerJson(200, 'sure!'), 'the answer is not JSON'],
    [
      'an answer without a boolean sponsor',
      answerJson(200, { sponsor: 'yes' }),
      'the answer has no boolean "sponsor"',
    ],
    ['an error status', answerJson(500, { sponsor: true }), 'HTTP 500'],
    [
      'a redirect (never followed)',
      ((_request, response) => {
        response.writeHead(302, { location: '/approve-elsewhere' });
        response.end();
      }) as Parameters<ApprovalReceiver['answerWith']>[0],
      'redirect (302) not followed',
    ],
  ])('%s is an error: denied under onError deny, sponsored under allow', async (_case, handler, detail) => {
    receiver.answerWith(handler);
    const denying = await clientWithPolicy(webhook());
    const allowing = await clientWithPolicy(webhook({ onError: 'allow' }));
    const arrivedBefore = receiver.received.length;

    expect((await sign(denying.client)).body.error).toEqual({
      code: -32600,
      message: `${REFUSAL} "approved ops" did not answer (${detail}); the policy denies on error`,
    });
    expect((await sign(allowing.client)).body.result).toBeDefined();
    // One request each: a redirect's target was never asked.
    expect(receiver.received.length).toBe(arrivedBefore + 2);
    expect(receiver.received.every((request) => request.body.type === 'sponsorship.approval')).toBe(true);
  });

  it('a refused connection is an error: denied under onError deny, sponsored under allow', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const url = `http://127.0.0.1:${port}/approve`;
    const denying = await clientWithPolicy({ approvalWebhook: { url } });
    const allowing = await clientWithPolicy({ approvalWebhook: { url, onError: 'allow' } });

    const denied = await sign(denying.client);
    expect(denied.body.error.code).toBe(-32600);
    expect(denied.body.error.message).toMatch(
      new RegExp(
        `^${REFUSAL} "approved ops" did not answer \\(ECONNREFUSED: .*\\); the policy denies on error$`,
      ),
    );
    expect((await sign(allowing.client)).body.result).toBeDefined();
  });

  it('a name that resolves to a private address is refused at delivery (DNS rebinding), never connected to', async () => {
    const owner = await signInNewMerchant(publicOnlyApp);
    // Registration checks literal addresses only; the name is checked on the address it resolves to.
    const { client } = await clientWithPolicy(
      { approvalWebhook: { url: 'https://localhost/approve' } },
      publicOnlyApp,
      owner,
    );
    const response = await paymasterRpc(publicOnlyApp, client.clientId, signedDataRequest());
    expect(response.body.error).toEqual({
      code: -32600,
      message: `${REFUSAL} "approved ops" did not answer (localhost resolves only to non-public addresses); the policy denies on error`,
    });
  });

  it('stub data never asks the receiver', async () => {
    receiver.answerWith(answerJson(200, { sponsor: false }));
    const { client } = await clientWithPolicy(webhook());
    const arrivedBefore = receiver.received.length;
    const response = await paymasterRpc(
      app,
      client.clientId,
      signedDataRequest({ method: 'pm_getPaymasterStubData' }),
    );
    expect(response.body.result).toBeDefined();
    expect(receiver.received.length).toBe(arrivedBefore);
  });

  it('the signing secret is shown once, kept across edits, stored only sealed, and new when the webhook is set anew', async () => {
    const { client, policyId, secret } = await clientWithPolicy(webhook());
    const path = `${policiesOf(client.id)}/${policyId}`;
    const read = await app.request(path, { headers: merchant.auth });
    expect(read.body.approvalWebhook).toEqual({ url: receiver.url, timeoutMs: 2000, onError: 'deny' });

    const edited = await app.request(path, {
      method: 'PATCH',
      headers: merchant.auth,
      json: webhook({ timeoutMs: 1000 }),
    });
    expect(edited.body.approvalWebhook).toEqual({ url: receiver.url, timeoutMs: 1000, onError: 'deny' });
    const stored = await app.db
      .selectFrom('paymaster_policies')
      .select('approval_webhook')
      .where('id', '=', policyId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect(stored.approval_webhook?.secretCiphertext).toMatch(/^v1\./);

    // Requests after the edit are still signed with the secret shown at first.
    receiver.answerWith(answerJson(200, { sponsor: true }));
    const arrivedBefore = receiver.received.length;
    expect((await sign(client)).body.result).toBeDefined();
    const approval = receiver.received[arrivedBefore]!;
    const [, timestamp] = /^t=(\d+),/.exec(approval.headers['x-service-signature'] as string)!;
    expect(approval.headers['x-service-signature']).toContain(
      `v1=${computeWebhookSignature(approval.rawBody, secret, Number(timestamp))}`,
    );

    await app.request(path, { method: 'PATCH', headers: merchant.auth, json: { approvalWebhook: null } });
    const renewed = await app.request(path, { method: 'PATCH', headers: merchant.auth, json: webhook() });
    expect(renewed.body.approvalWebhook.secret).toMatch(/^whsec_/);
    expect(renewed.body.approvalWebhook.secret).not.toBe(secret);
  });
});
