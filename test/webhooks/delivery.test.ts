import { randomBytes } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { createSessionEventActivities } from '../../activities/sessionEvents';
import { createDb, type Db } from '../../db/client';
import { findSessionById } from '../../db/sessions';
import { deleteWebhookEndpoint, replaceWebhookSecret, updateWebhookEndpoint } from '../../db/webhooks';
import { startTimeSkippingTestEnvironment } from '../../dev/services/temporal';
import { redispatchWebhookDelivery, webhookDeliveryStarterFor } from '../../workflowClient/webhookDeliveries';
import { webhookDeliveryWorkflowId } from '../../workflows/workflowIds';
import { verifyWebhook, WebhookVerificationError } from '../../webhooks/verifyWebhook';
import {
  createWebhookSecretBox,
  developmentWebhookSecretKey,
  generateWebhookSecret,
} from '../../webhooks/webhookSecrets';
import { bundleWorkflows, createWorkers, type TemporalWorkers } from '../../workers/createWorkers';
import { taskQueueNames, type TaskQueueRole } from '../../workflows/taskQueues';
import { webhookDeliveryWorkflow } from '../../workflows/webhookDelivery';
import { testStack } from '../harness/stack';
import { quietTemporalRuntime } from '../harness/workers';
import { createConfirmingSession, createEndpoint, createMerchant } from './fixtures';
import { startWebhookReceiver, type WebhookReceiver } from './receiver';

/**
 * Delivery workflows on the time-skipping test server: the retry schedule's hours pass in seconds,
 * against the real database and a real HTTP receiver on a loopback port.
 */
const MINUTE = 60_000;
const secrets = createWebhookSecretBox(developmentWebhookSecretKey());

describe('webhook delivery workflow (time-skipping server)', () => {
  let env: TestWorkflowEnvironment;
  let db: Db;
  let bundle: WorkflowBundle;
  const workerSets: { workers: TemporalWorkers; running: Promise<void> }[] = [];
  let developmentQueues: Record<TaskQueueRole, string>;
  let liveQueues: Record<TaskQueueRole, string>;
  let receiver: WebhookReceiver;

  async function startWorkers(allowPrivateTargets: boolean): Promise<Record<TaskQueueRole, string>> {
    const taskQueues = taskQueueNames(`ts${randomBytes(4).toString('hex')}-`);
    const workers = await createWorkers({
      connection: env.nativeConnection,
      namespace: 'default',
      dependencies: { db, temporal: env.client, webhooks: { secrets, allowPrivateTargets } },
      taskQueues,
      workflowBundle: bundle,
    });
    workerSets.push({ workers, running: workers.run() });
    return taskQueues;
  }

  beforeAll(async () => {
    quietTemporalRuntime();
    db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 5 });
    [env, bundle] = await Promise.all([startTimeSkippingTestEnvironment(), bundleWorkflows()]);
    developmentQueues = await startWorkers(true);
    liveQueues = await startWorkers(false);
  });

  afterAll(async () => {
    await receiver?.close();
    for (const { workers, running } of workerSets) {
      await workers.shutdown();
      await running;
    }
    await env?.teardown();
    await db?.destroy();
  });

  afterEach(async () => {
    await receiver?.close();
  });

  /** A merchant of its own with a confirming session, its stored event, and an endpoint at the receiver. */
  async function scenario({ path = '/hook', url }: { path?: string; url?: string } = {}) {
    const merchantId = await createMerchant(db);
    const session = await createConfirmingSession(db, merchantId);
    const { endpoint, secret } = await createEndpoint(db, secrets, {
      merchantId,
      url: url ?? `${receiver.baseUrl}${path}`,
    });
    const events = createSessionEventActivities({
      db,
      startWebhookDelivery: webhookDeliveryStarterFor(env.client, developmentQueues.webhooks),
    });
    const event = await events.recordSessionConfirmingEvent({ sessionId: session.id });
    return { merchantId, session, endpoint, secret, eventId: event.id };
  }

  const deliver = (eventId: string, endpointId: string, queues = developmentQueues) =>
    env.client.workflow.execute(webhookDeliveryWorkflow, {
      workflowId: webhookDeliveryWorkflowId(eventId, endpointId),
      taskQueue: queues.webhooks,
      args: [{ eventId, endpointId }],
    });

  const attemptsOf = (endpointId: string) =>
    db
      .selectFrom('webhook_delivery_attempts')
      .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_delivery_attempts.delivery_id')
      .selectAll('webhook_delivery_attempts')
      .where('webhook_deliveries.endpoint_id', '=', endpointId)
      .orderBy('webhook_deliveries.created_at')
      .orderBy('attempt_number')
      .execute();

  const deliveriesOf = (endpointId: string) =>
    db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .orderBy('created_at')
      .execute();

  it('a receiver that always fails gets exactly 5 attempts at +0, +1 m, +6 m, +36 m, +2 h 36 m, then the delivery is final-failed', async () => {
    receiver = await startWebhookReceiver(() => ({ status: 500, body: 'x'.repeat(5000) }));
    const { session, endpoint, secret, eventId } = await scenario();

    expect(await deliver(eventId, endpoint.id)).toEqual({ status: 'failed', attempts: 5 });

    const attempts = await attemptsOf(endpoint.id);
    expect(attempts.map((attempt) => attempt.attempt_number)).toEqual([1, 2, 3, 4, 5]);
    const first = attempts[0]!.attempted_at.getTime();
    const offsetsMin = attempts.map((attempt) => (attempt.attempted_at.getTime() - first) / MINUTE);
    // Each pause starts when the previous attempt has finished, so an attempt that takes real time
    // (a loaded machine) adds its duration: the offsets are the schedule plus at most a few seconds each.
    [0, 1, 6, 36, 156].forEach((expected, index) => {
      expect(offsetsMin[index]).toBeGreaterThanOrEqual(expected);
      expect(offsetsMin[index]).toBeLessThan(expected + (index * 15) / 60 + 0.01);
    });
    for (const attempt of attempts) {
      expect(attempt).toMatchObject({ outcome: 'http_error', status_code: 500, error: 'HTTP 500' });
      expect(attempt.response_body).toBe('x'.repeat(1024)); // truncated to 1 KiB
      expect(attempt.latency_ms).toBeGreaterThanOrEqual(0);
    }
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      { status: 'failed', attempt_count: 5, next_attempt_at: null },
    ]);
    expect((await findSessionById(db, session.id))!.webhook_delivered).toBe(false);

    // Every attempt carried the same stored bytes and event id, signed afresh with the endpoint secret.
    expect(receiver.received).toHaveLength(5);
    const stored = await db
      .selectFrom('events')
      .select('payload')
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    for (const request of receiver.received) {
      expect(request.rawBody).toBe(stored.payload);
      expect(request.headers['x-service-event-id']).toBe(eventId);
      expect(request.headers['content-type']).toBe('application/json');
      expect(
        verifyWebhook(request.rawBody, request.headers['x-service-signature'] as string, secret),
      ).toMatchObject({ id: eventId });
    }
  });

  it('a receiver that recovers on attempt 3 gets it then, and the session reads webhookDelivered', async () => {
    receiver = await startWebhookReceiver(({ number }) => (number < 3 ? { status: 503 } : { status: 204 }));
    const { session, endpoint, eventId } = await scenario();

    expect(await deliver(eventId, endpoint.id)).toEqual({ status: 'succeeded', attempts: 3 });
    expect((await attemptsOf(endpoint.id)).map(({ outcome, status_code }) => [outcome, status_code])).toEqual(
      [
        ['http_error', 503],
        ['http_error', 503],
        ['succeeded', 204],
      ],
    );
    expect(await deliveriesOf(endpoint.id)).toMatchObject([
      { status: 'succeeded', attempt_count: 3, next_attempt_at: null },
    ]);
    expect((await findSessionById(db, session.id))!.webhook_delivered).toBe(true);
    expect(receiver.received).toHaveLength(3);
  });

  it('a receiver slower than 10 s counts as a failed attempt (timeout), and the next attempt goes out', async () => {
    receiver = await startWebhookReceiver(({ number }) => (number === 1 ? 'hang' : { status: 200 }));
    const { session, endpoint, eventId } = await scenario();
    const startedAt = Date.now();

    expect(await deliver(eventId, endpoint.id)).toEqual({ status: 'succeeded', attempts: 2 });
    const attempts = await attemptsOf(endpoint.id);
    expect(attempts[0]).toMatchObject({ attempt_number: 1, outcome: 'timeout', status_code: null });
    expect(attempts[0]!.latency_ms).toBeGreaterThanOrEqual(9_000);
    expect(attempts[1]).toMatchObject({ attempt_number: 2, outcome: 'succeeded', status_code: 200 });
    expect((await findSessionById(db, session.id))!.webhook_delivered).toBe(true);
    expect(Date.now() - startedAt).toBeLessThan(30_000);
  });

  it('a 3xx is a failed attempt and its redirect is not followed', async () => {
    receiver = await startWebhookReceiver(({ number }) =>
      number === 1 ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200 },
    );
    const { endpoint, eventId } = await scenario();

    expect(await deliver(eventId, endpoint.id)).toEqual({ status: 'succeeded', attempts: 2 });
    expect((await attemptsOf(endpoint.id))[0]).toMatchObject({
      outcome: 'http_error',
      status_code: 302,
      error: 'redirect (302) not followed',
    });
    expect(receiver.received.map((request) => request.path)).toEqual(['/hook', '/hook']);
  });

  it('after a secret rotation, new deliveries verify with the new secret and no longer with the old one', async () => {
    receiver = await startWebhookReceiver();
    const { merchantId, endpoint, secret: oldSecret, eventId } = await scenario();
    await deliver(eventId, endpoint.id);
    const newSecret = generateWebhookSecret();
    await replaceWebhookSecret(db, merchantId, endpoint.id, secrets.seal(newSecret, endpoint.id));
    await redispatchWebhookDelivery(env.client, {
      eventId,
      endpointId: endpoint.id,
      taskQueue: developmentQueues.webhooks,
    });
    const [before, after] = await receiver.waitFor(2);

    expect(
      verifyWebhook(before!.rawBody, before!.headers['x-service-signature'] as string, oldSecret),
    ).toMatchObject({ id: eventId });
    expect(
      verifyWebhook(after!.rawBody, after!.headers['x-service-signature'] as string, newSecret),
    ).toMatchObject({ id: eventId });
    expect(() =>
      verifyWebhook(after!.rawBody, after!.headers['x-service-signature'] as string, oldSecret),
    ).toThrow(WebhookVerificationError);
  });

  it('disabling the endpoint stops pending retries (delivery canceled)', async () => {
    receiver = await startWebhookReceiver(() => ({ status: 500 }));
    const { merchantId, endpoint, eventId } = await scenario();
    const handle = await env.client.workflow.start(webhookDeliveryWorkflow, {
      workflowId: webhookDeliveryWorkflowId(eventId, endpoint.id),
      taskQueue: developmentQueues.webhooks,
      args: [{ eventId, endpointId: endpoint.id }],
    });
    await receiver.waitFor(1);
    await updateWebhookEndpoint(db, merchantId, endpoint.id, { enabled: false });

    expect(await handle.result()).toEqual({ status: 'canceled', attempts: 1 });
    expect(receiver.received).toHaveLength(1);
    expect(await deliveriesOf(endpoint.id)).toMatchObject([{ status: 'canceled', attempt_count: 1 }]);
  });

  it('deleting the endpoint stops pending retries and removes the delivery history', async () => {
    receiver = await startWebhookReceiver(() => ({ status: 500 }));
    const { merchantId, endpoint, eventId } = await scenario();
    const handle = await env.client.workflow.start(webhookDeliveryWorkflow, {
      workflowId: webhookDeliveryWorkflowId(eventId, endpoint.id),
      taskQueue: developmentQueues.webhooks,
      args: [{ eventId, endpointId: endpoint.id }],
    });
    await receiver.waitFor(1);
    // Let the first attempt's record land, so there is history to delete.
    for (let tries = 0; tries < 100 && (await attemptsOf(endpoint.id)).length === 0; tries++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await attemptsOf(endpoint.id)).toHaveLength(1);
    expect(await deleteWebhookEndpoint(db, merchantId, endpoint.id)).toBe(true);

    expect(await handle.result()).toEqual({ status: 'canceled', attempts: 1 });
    expect(receiver.received).toHaveLength(1);
    expect(await deliveriesOf(endpoint.id)).toEqual([]);
    expect(await attemptsOf(endpoint.id)).toEqual([]);
  });

  it('a manual re-dispatch reaching a waiting delivery makes the next attempt at once', async () => {
    receiver = await startWebhookReceiver(({ number }) => (number === 1 ? { status: 500 } : { status: 200 }));
    const { endpoint, eventId } = await scenario();
    const handle = await env.client.workflow.start(webhookDeliveryWorkflow, {
      workflowId: webhookDeliveryWorkflowId(eventId, endpoint.id),
      taskQueue: developmentQueues.webhooks,
      args: [{ eventId, endpointId: endpoint.id }],
    });
    await receiver.waitFor(1);
    // Time is not skipped here (nobody awaits a result), so only the signal can bring attempt 2 forward.
    await redispatchWebhookDelivery(env.client, {
      eventId,
      endpointId: endpoint.id,
      taskQueue: developmentQueues.webhooks,
    });
    await receiver.waitFor(2, 10_000);

    expect(await handle.result()).toEqual({ status: 'succeeded', attempts: 2 });
    expect(await deliveriesOf(endpoint.id)).toHaveLength(1);
  });

  it('a manual re-dispatch arriving during an attempt that then succeeds still gets a send of its own', async () => {
    receiver = await startWebhookReceiver(({ number }) =>
      number === 1 ? { status: 200, delayMs: 1_000 } : { status: 200 },
    );
    const { endpoint, eventId } = await scenario();
    const handle = await env.client.workflow.start(webhookDeliveryWorkflow, {
      workflowId: webhookDeliveryWorkflowId(eventId, endpoint.id),
      taskQueue: developmentQueues.webhooks,
      args: [{ eventId, endpointId: endpoint.id }],
    });
    await receiver.waitFor(1);
    await redispatchWebhookDelivery(env.client, {
      eventId,
      endpointId: endpoint.id,
      taskQueue: developmentQueues.webhooks,
    });

    expect(await handle.result()).toEqual({ status: 'succeeded', attempts: 2 });
    expect(receiver.received).toHaveLength(2);
    expect((await attemptsOf(endpoint.id)).map(({ outcome }) => outcome)).toEqual(['succeeded', 'succeeded']);
  });

  it('a manual re-dispatch after a final failure starts a new run with its own delivery record', async () => {
    receiver = await startWebhookReceiver(() => ({ status: 500 }));
    const { session, endpoint, eventId } = await scenario();
    expect(await deliver(eventId, endpoint.id)).toEqual({ status: 'failed', attempts: 5 });

    receiver.setBehaviour(() => ({ status: 200 }));
    await redispatchWebhookDelivery(env.client, {
      eventId,
      endpointId: endpoint.id,
      taskQueue: developmentQueues.webhooks,
    });
    expect(
      await env.client.workflow.getHandle(webhookDeliveryWorkflowId(eventId, endpoint.id)).result(),
    ).toEqual({
      status: 'succeeded',
      attempts: 1,
    });
    expect(
      (await deliveriesOf(endpoint.id)).map(({ status, attempt_count }) => [status, attempt_count]),
    ).toEqual([
      ['failed', 5],
      ['succeeded', 1],
    ]);
    expect(receiver.received.map((request) => request.headers['x-service-event-id'])).toEqual(
      Array(6).fill(eventId),
    );
    expect((await findSessionById(db, session.id))!.webhook_delivered).toBe(true);
  });

  describe('live configuration (WEBHOOK_ALLOW_PRIVATE_TARGETS=false): the address connected to must be public', () => {
    it.each([
      ['a name that resolves to loopback', (port: number) => `http://localhost:${port}/hook`],
      [
        'a loopback literal stored before the rules tightened',
        (port: number) => `http://127.0.0.1:${port}/hook`,
      ],
    ])('%s is refused at delivery and the receiver never sees a request', async (_case, urlFor) => {
      receiver = await startWebhookReceiver();
      const { session, endpoint, eventId } = await scenario({ url: urlFor(receiver.port) });

      expect(await deliver(eventId, endpoint.id, liveQueues)).toEqual({ status: 'failed', attempts: 5 });
      const attempts = await attemptsOf(endpoint.id);
      expect(attempts.map((attempt) => attempt.outcome)).toEqual(Array(5).fill('blocked_address'));
      expect(attempts[0]!.error).toMatch(/not a public address|non-public addresses/);
      expect(receiver.received).toEqual([]);
      expect((await findSessionById(db, session.id))!.webhook_delivered).toBe(false);
    });
  });
});
