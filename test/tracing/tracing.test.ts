import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { findFreePort } from '../../dev/services/freePort';
import { sessionWorkflowId } from '../../workflows/workflowIds';
import { depositDetectedSignal } from '../../workflows/paymentSession';
import type { TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { ProjectProcess, requestAt, until } from '../harness/projectProcess';
import { TEST_STACK_FILE_VARIABLE, testStack } from '../harness/stack';
import { startWebhookReceiver, type WebhookReceiver } from '../webhooks/receiver';

/**
 * OpenTelemetry end to end: the api and the worker run as their own processes with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP/HTTP collector (the real protocol: JSON
 * ExportTraceServiceRequest bodies on POST /v1/traces). One session creation is one trace: the api's
 * request span, the Temporal client's StartWorkflow, the workflow's activities, the workflow they start
 * (RunWorkflow), its RunActivity and the outbound HTTP call that delivers the webhook, whose
 * `traceparent` header carries the same trace id to the merchant.
 */
interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  /** String attributes, e.g. `url.full`. */
  attributes: Record<string, string>;
}

/** A collector speaking OTLP/HTTP JSON; it keeps every span it was sent. */
async function startOtlpCollector(): Promise<{ url: string; spans: ExportedSpan[]; close(): Promise<void> }> {
  const spans: ExportedSpan[] = [];
  // OTLP JSON encodes ids as hex (the spec's JSON mapping); protobuf-JSON tools may send base64.
  const hexId = (id: string) =>
    /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      if (!request.headers['content-type']?.startsWith('application/json')) {
        response.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = (resourceSpans.resource?.attributes ?? []).find(
          (attribute: { key: string }) => attribute.key === 'service.name',
        )?.value?.stringValue;
        for (const scopeSpans of resourceSpans.scopeSpans ?? [])
          for (const span of scopeSpans.spans ?? [])
            spans.push({
              service,
              traceId: hexId(span.traceId),
              spanId: hexId(span.spanId),
              parentSpanId: span.parentSpanId ? hexId(span.parentSpanId) : undefined,
              name: span.name,
              kind: span.kind,
              attributes: Object.fromEntries(
                (span.attributes ?? [])
                  .filter(
                    (attribute: { value: { stringValue?: string } }) =>
                      attribute.value.stringValue !== undefined,
                  )
                  .map((attribute: { key: string; value: { stringValue: string } }) => [
                    attribute.key,
                    attribute.value.stringValue,
                  ]),
              ),
            });
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('OpenTelemetry traces from the api through Temporal to activities and outbound calls', () => {
  const prefix = `ot${randomBytes(3).toString('hex')}-`;
  let collector: Awaited<ReturnType<typeof startOtlpCollector>>;
  let receiver: WebhookReceiver;
  let api: ProjectProcess;
  let worker: ProjectProcess;
  let apiUrl: string;
  let connection: Connection;
  let temporal: Client;
  const call: TestApp['request'] = (path, init) => requestAt(apiUrl, path, init);

  beforeAll(async () => {
    collector = await startOtlpCollector();
    receiver = await startWebhookReceiver();
    const stack = testStack();
    const common = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: stack.temporalNamespace,
      TEMPORAL_TASK_QUEUE_PREFIX: prefix,
      DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      ...Object.fromEntries(stack.chains.map((chain) => [`RPC_URL_${chain.chainId}`, chain.rpcUrl])),
    };
    const apiPort = await findFreePort();
    apiUrl = `http://127.0.0.1:${apiPort}`;
    api = new ProjectProcess('api/main.ts', {
      ...common,
      PORT: String(apiPort),
      SIGNER_URL: stack.signer.url,
      SIGNER_SHARED_SECRET: stack.signer.sharedSecret,
      SMTP_URL: stack.mail.smtpUrl,
    });
    worker = new ProjectProcess('workers/main.ts', common);
    api.start();
    worker.start();
    connection = await Connection.connect({ address: stack.temporalAddress });
    temporal = new Client({ connection, namespace: stack.temporalNamespace });
    await until(
      async () => (await call('/health')).status === 200,
      90_000,
      () => api.output,
    );
    await worker.waitForOutput(/worker polling/, 180_000);
  }, 240_000);

  afterAll(async () => {
    await api?.kill('SIGTERM');
    await worker?.kill('SIGTERM');
    await connection?.close();
    await receiver?.close();
    await collector?.close();
  }, 60_000);

  it('one trace: POST /v1/sessions → StartWorkflow → activities → StartWorkflow → RunWorkflow → RunActivity → the webhook POST', async () => {
    const merchant = await signInNewMerchant({ request: call });
    const sk = { authorization: `Bearer ${await createApiKey({ request: call }, merchant)}` };
    const endpoint = await call('/v1/webhooks', {
      method: 'POST',
      headers: sk,
      json: { url: `${receiver.baseUrl}/hooks` },
    });
    expect(endpoint.status).toBe(201);
    const created = await call('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '5', sandboxMode: true },
    });
    expect(created.status).toBe(201);
    // The deposit monitor's signal (from this untraced client): the workflow goes on in its own trace.
    await temporal.workflow.getHandle(sessionWorkflowId(created.body.id)).signal(depositDetectedSignal, {
      chainId: 84532,
      token: '0x0000000000000000000000000000000000000001',
      amount: '5000000',
      txHash: `0x${randomBytes(32).toString('hex')}`,
      blockNumber: '7',
    });
    const [delivery] = await receiver.waitFor(1, 60_000);
    const traceparent = String(delivery!.headers.traceparent);
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    const traceId = traceparent.split('-')[1]!;

    const find = (name: string, service: string) =>
      collector.spans.find(
        (span) => span.traceId === traceId && span.name === name && span.service === service,
      );
    const expected: [string, string][] = [
      ['POST /v1/sessions', 'stablepay-api'],
      ['StartWorkflow:paymentSessionWorkflow', 'stablepay-api'],
      ['RunActivity:startWebhookDeliveries', 'stablepay-worker'],
      ['StartWorkflow:webhookDeliveryWorkflow', 'stablepay-worker'],
      ['RunWorkflow:webhookDeliveryWorkflow', 'stablepay-worker'],
      // The first attempt runs in one activity with its delivery and attempt records.
      ['StartActivity:openAndAttemptFirst', 'stablepay-worker'],
      ['RunActivity:openAndAttemptFirst', 'stablepay-worker'],
    ];
    // Batches are exported every 2 s, workflow spans once the workflow run ends.
    await until(
      () => Promise.resolve(expected.every(([name, service]) => find(name, service))),
      60_000,
      () =>
        JSON.stringify(collector.spans.filter((span) => span.traceId === traceId).map((span) => span.name)),
    );
    const [request, startSession, startDeliveries, startDelivery, runDelivery, startAttempt, runAttempt] =
      expected.map(([name, service]) => find(name, service)!);
    expect(request!.kind).toBe(2); // SERVER
    expect(request!.parentSpanId).toBeUndefined();
    expect(startSession!.parentSpanId).toBe(request!.spanId);
    expect(startDelivery!.parentSpanId).toBe(startDeliveries!.spanId);
    expect(runDelivery!.parentSpanId).toBe(startDelivery!.spanId);
    expect(startAttempt!.parentSpanId).toBe(runDelivery!.spanId);
    expect(runAttempt!.parentSpanId).toBe(startAttempt!.spanId);
    // The outbound webhook POST is a client span of the attempt, and its traceparent is what the receiver got.
    await until(
      () => Promise.resolve(collector.spans.some((span) => span.parentSpanId === runAttempt!.spanId)),
      30_000,
    );
    const outbound = collector.spans.find((span) => span.parentSpanId === runAttempt!.spanId)!;
    expect(outbound).toMatchObject({ kind: 3, name: 'POST', traceId }); // CLIENT
    expect(traceparent.split('-')[2]).toBe(outbound.spanId);
    // fetch spans (chain RPC, the signer) name the origin only: provider URLs carry keys in their paths.
    const fetchUrls = collector.spans.flatMap((span) => span.attributes['url.full'] ?? []);
    expect(fetchUrls.length).toBeGreaterThan(0);
    expect(fetchUrls.filter((url) => url !== new URL(url).origin)).toEqual([]);
    const traced = collector.spans.filter((span) => span.traceId === traceId);
    process.stdout.write(
      `trace ${traceId}: ${traced.length} spans: ${traced.map((span) => `${span.service}/${span.name}`).join(', ')}\n`,
    );
  }, 180_000);
});
