import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createSessionEventActivities } from '../../activities/sessionEvents';
import { loadConfig } from '../../config';
import { createDb, type Db } from '../../db/client';
import { updateWebhookEndpoint } from '../../db/webhooks';
import { startTimeSkippingTestEnvironment } from '../../dev/services/temporal';
import { createLogger } from '../../logging/logger';
import { createMailer } from '../../mail/mailer';
import { verifyWebhook } from '../../webhooks/verifyWebhook';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';
import { bundleWorkflows, createWorkers, type TemporalWorkers } from '../../workers/createWorkers';
import { taskQueueNames } from '../../workflows/taskQueues';
import { webhookDeliveryWorkflow } from '../../workflows/webhookDelivery';
import { webhookDeliveryWorkflowId } from '../../workflows/workflowIds';
import { mailsTo } from '../harness/mailbox';
import { testStack } from '../harness/stack';
import { quietTemporalRuntime } from '../harness/workers';
import { createConfirmingSession, createEndpoint, createMerchant } from './fixtures';
import { startWebhookReceiver, type WebhookReceiver } from './receiver';
import { webhookDeliveryStarterFor } from '../../workflowClient/webhookDeliveries';

/**
 * docs/operations.md "A webhook endpoint disabled for failing" on the time-skipping server: an endpoint whose every delivery has failed for 5 days is
 * disabled, the merchant's verified e-mail is told (MailDev), and `endpoint.disabled` reaches the
 * merchant's other endpoint that lists it. Days pass in seconds; the database and HTTP are real.
 */
const DAY_MS = 24 * 3600_000;
const secrets = createWebhookSecretBox(developmentWebhookSecretKey());

describe('failing endpoints are disabled after 5 days (time-skipping server)', () => {
  let env: TestWorkflowEnvironment;
  let db: Db;
  let workers: TemporalWorkers;
  let running: Promise<void>;
  let receiver: WebhookReceiver;
  const taskQueues = taskQueueNames(`dis${randomBytes(4).toString('hex')}-`);

  beforeAll(async () => {
    quietTemporalRuntime();
    const stack = testStack();
    db = createDb({ connectionString: stack.databaseUrl, maxConnections: 5 });
    const [environment, bundle] = await Promise.all([startTimeSkippingTestEnvironment(), bundleWorkflows()]);
    env = environment;
    const mailer = createMailer({
      config: loadConfig({ SMTP_URL: stack.mail.smtpUrl, LOG_LEVEL: 'silent' }),
      logger: createLogger({ level: 'silent' }),
    });
    workers = await createWorkers({
      connection: env.nativeConnection,
      namespace: 'default',
      dependencies: { db, temporal: env.client, webhooks: { secrets, allowPrivateTargets: true, mailer } },
      taskQueues,
      workflowBundle: bundle,
    });
    running = workers.run();
    receiver = await startWebhookReceiver((request) =>
      request.path === '/failing' ? { status: 503, body: 'down' } : { status: 200, body: 'ok' },
    );
  });

  afterAll(async () => {
    await receiver?.close();
    await workers?.shutdown();
    await running;
    await env?.teardown();
    await db?.destroy();
  });

  /** A merchant with a verified e-mail, an endpoint that always fails and one that lists endpoint.disabled. */
  async function scenario() {
    const merchantId = await createMerchant(db);
    const email = `ops-${randomUUID()}@example.com`;
    await db
      .updateTable('merchants')
      .set({ email, email_verified_at: new Date() })
      .where('id', '=', merchantId)
      .execute();
    const failing = await createEndpoint(db, secrets, { merchantId, url: `${receiver.baseUrl}/failing` });
    const watcher = await createEndpoint(db, secrets, { merchantId, url: `${receiver.baseUrl}/watcher` });
    await db
      .updateTable('webhook_endpoints')
      .set({ events: ['endpoint.disabled'] })
      .where('id', '=', watcher.endpoint.id)
      .execute();
    const events = createSessionEventActivities({
      db,
      startWebhookDelivery: webhookDeliveryStarterFor(env.client, taskQueues.webhooks),
    });
    /** New session.confirming events of the merchant, stored (not yet delivered). */
    const recordEvents = async (count: number) => {
      const eventIds: string[] = [];
      for (let n = 0; n < count; n += 1) {
        const session = await createConfirmingSession(db, merchantId);
        eventIds.push((await events.recordSessionConfirmingEvent({ sessionId: session.id })).id);
      }
      return eventIds;
    };
    /** Delivers the event to the failing endpoint; resolves when its workflow ends. */
    const deliver = (eventId: string) =>
      env.client.workflow.execute(webhookDeliveryWorkflow, {
        workflowId: webhookDeliveryWorkflowId(eventId, failing.endpoint.id),
        taskQueue: taskQueues.webhooks,
        args: [{ eventId, endpointId: failing.endpoint.id }],
      });
    /**
     * The endpoint's run of failures began `days` earlier than recorded. The time-skipping server skips
     * exactly within one run's timers, but between separate runs an idle server may jump years ahead;
     * so days of history are set, and each delivery's own schedule runs on skipped time.
     */
    const failingForDaysBefore = (days: number) =>
      db
        .updateTable('webhook_endpoints')
        .set({ failing_since: sql<Date>`failing_since - make_interval(days => ${days})` })
        .where('id', '=', failing.endpoint.id)
        .execute();
    const endpointRow = (id: string) =>
      db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return { merchantId, email, failing, watcher, recordEvents, deliver, failingForDaysBefore, endpointRow };
  }

  it('5 days of failures disable the endpoint, mail its merchant and send endpoint.disabled to the other endpoint; re-enabling clears it', async () => {
    const { email, failing, watcher, recordEvents, deliver, failingForDaysBefore, endpointRow } =
      await scenario();
    const [first, second] = await recordEvents(2);

    expect(await deliver(first!)).toEqual({ status: 'failed', attempts: 5 });
    await failingForDaysBefore(5);
    // Past 5 days of failures at this delivery's first attempt: the endpoint is disabled there, so no
    // second attempt is made. (The arithmetic at the 5-day edge: test/webhooks/failingRun.test.ts.)
    expect(await deliver(second!)).toEqual({ status: 'canceled', attempts: 1 });
    const disabled = await endpointRow(failing.endpoint.id);
    expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    const failingForMs = disabled.disabled_at!.getTime() - disabled.failing_since!.getTime();
    expect(failingForMs).toBeGreaterThanOrEqual(5 * DAY_MS);

    const announced = await receiver
      .waitFor(1, 30_000)
      .then(() => receiver.received.filter((request) => request.path === '/watcher'));
    expect(announced).toHaveLength(1);
    const event = verifyWebhook<{
      type: string;
      data: { endpoint: { id: string; url: string; disabledAt: string } };
    }>(announced[0]!.rawBody, announced[0]!.headers['x-service-signature'] as string, watcher.secret, {
      now: new Date(
        Number(/t=(\d+)/.exec(announced[0]!.headers['x-service-signature'] as string)![1]) * 1000,
      ),
    });
    expect(event.type).toBe('endpoint.disabled');
    expect(event.data.endpoint).toEqual({
      id: failing.endpoint.id,
      url: failing.endpoint.url,
      disabledAt: disabled.disabled_at!.toISOString(),
    });

    let mails = await mailsTo(email);
    for (let tries = 0; mails.length === 0 && tries < 100; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      mails = await mailsTo(email);
    }
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('StablePay: a webhook endpoint was disabled');
    expect(mails[0]!.text).toContain(failing.endpoint.url);

    const reenabled = await updateWebhookEndpoint(db, disabled.merchant_id, failing.endpoint.id, {
      enabled: true,
    });
    expect(reenabled).toMatchObject({
      enabled: true,
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
    });
  });

  it('a success within the 5 days starts the count again: the endpoint stays enabled', async () => {
    const { failing, recordEvents, deliver, failingForDaysBefore, endpointRow } = await scenario();
    const [first, second, third] = await recordEvents(3);
    expect(await deliver(first!)).toEqual({ status: 'failed', attempts: 5 });
    await failingForDaysBefore(4);
    receiver.setBehaviour(() => ({ status: 200, body: 'ok' }));
    expect(await deliver(second!)).toEqual({ status: 'succeeded', attempts: 1 });
    expect((await endpointRow(failing.endpoint.id)).failing_since).toBeNull();
    receiver.setBehaviour((request) =>
      request.path === '/failing' ? { status: 503, body: 'down' } : { status: 200, body: 'ok' },
    );
    expect(await deliver(third!)).toEqual({ status: 'failed', attempts: 5 });
    expect(await endpointRow(failing.endpoint.id)).toMatchObject({ enabled: true, disabled_reason: null });
  });
});
