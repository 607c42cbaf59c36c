import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { WorkflowFailedError } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createPublicClient, http } from 'viem';
import { createLogger } from '../../logging/logger';
import {
  REDACTED_URL,
  redactProviderUrls,
  withRedactedProviderUrls,
} from '../../logging/providerUrlRedaction';
import { redactingProviderUrls } from '../../workers/createWorkers';
import { createTemporalClient } from '../../workflowClient/connection';
import { testStack } from '../harness/stack';
import type { callDeadRpcWorkflow } from './deadRpcWorkflow';

Runtime.install({ logger: new DefaultLogger('WARN') });

/**
 * RPC provider URLs carry the provider's key, and viem quotes the URL in its errors. None reaches a
 * failureReason (through an activity failure), a log line or a redacted text: real viem errors from a
 * real HTTP provider that fails, through the real Temporal worker and the real logger.
 */
const KEY = `k${randomBytes(12).toString('hex')}`;

describe('provider URLs never leave in error texts', () => {
  let provider: Server;
  let rpcUrl: string;
  beforeAll(async () => {
    // A provider that refuses every call, as one does for a revoked key or an outage.
    provider = createServer((_request, response) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('upstream failure');
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    rpcUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v3/${KEY}?apikey=${KEY}`;
  });
  afterAll(() => new Promise<void>((resolve) => provider.close(() => resolve())));

  const viemError = async () => {
    const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) });
    return client.getBlockNumber().then(
      () => {
        throw new Error('the provider answered');
      },
      (error: unknown) => error as Error & { shortMessage?: string; details?: string; url?: string },
    );
  };

  it.each([
    ['https://mainnet.infura.io/v3/abc123 failed', `${REDACTED_URL} failed`],
    ['URL: https://eth.g.alchemy.com/v2/KEY\nRequest body: {}', `URL: ${REDACTED_URL}\nRequest body: {}`],
    ['wss://base.quiknode.pro/SECRET/ closed', `${REDACTED_URL} closed`],
    ['execution reverted: SlippageExceeded(1, 2)', 'execution reverted: SlippageExceeded(1, 2)'],
  ])('redacts %j', (text, expected) => {
    expect(redactProviderUrls(text)).toBe(expected);
  });

  it('a real viem error keeps its class and fields, and none of them holds the URL or the key', async () => {
    const error = await viemError();
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).toContain(KEY);
    const redacted = withRedactedProviderUrls(error);
    expect(redacted).toBe(error);
    expect(redacted.name).toBe('HttpRequestError');
    for (const text of [
      redacted.message,
      redacted.stack,
      redacted.shortMessage,
      redacted.details,
      redacted.url,
    ])
      expect(String(text)).not.toContain(KEY);
    expect(redacted.message).toContain(REDACTED_URL);
  });

  it('the log serializer writes errors without the URL', async () => {
    const lines: string[] = [];
    const logger = createLogger(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    logger.error({ err: await viemError() }, 'rpc failed');
    logger.warn({ error: await viemError() }, 'rpc failed');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).not.toContain(KEY);
      expect(line).toContain(REDACTED_URL);
    }
  });

  it('an activity failing on the RPC reaches the workflow (and so a failureReason) and the history without the URL', async () => {
    const taskQueue = `redaction-${randomBytes(6).toString('hex')}`;
    const connection = await NativeConnection.connect({ address: testStack().temporalAddress });
    const worker = await Worker.create({
      connection,
      namespace: testStack().temporalNamespace,
      taskQueue,
      workflowsPath: require.resolve('./deadRpcWorkflow'),
      activities: {
        async readBlockNumber(url: string) {
          const client = createPublicClient({ transport: http(url, { retryCount: 0 }) });
          return String(await client.getBlockNumber());
        },
      },
      interceptors: { activity: [redactingProviderUrls] },
    });
    const temporal = await createTemporalClient({
      address: testStack().temporalAddress,
      namespace: testStack().temporalNamespace,
    });
    try {
      const failure = await worker.runUntil(async () => {
        const handle = await temporal.client.workflow.start<typeof callDeadRpcWorkflow>(
          'callDeadRpcWorkflow',
          {
            taskQueue,
            workflowId: taskQueue,
            args: [rpcUrl],
          },
        );
        const outcome = await handle.result().then(
          () => undefined,
          (error: unknown) => error,
        );
        return { outcome, history: JSON.stringify(await handle.fetchHistory()) };
      });
      expect(failure.outcome).toBeInstanceOf(WorkflowFailedError);
      const activityFailure = (failure.outcome as WorkflowFailedError).cause;
      const reason = (activityFailure?.cause as Error | undefined)?.message ?? '';
      expect(reason).toContain('HTTP request failed');
      expect(reason).toContain(REDACTED_URL);
      expect(reason).not.toContain(KEY);
      // The workflow's input holds the URL (the test passes it); the failure events must not.
      const failureEvents = failure.history.split('"activityTaskFailedEventAttributes"').slice(1).join('');
      expect(failureEvents.length).toBeGreaterThan(0);
      expect(failureEvents).not.toContain(KEY);
    } finally {
      await temporal.close();
      await connection.close();
    }
  }, 120_000);
});
