import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createDb, type Db } from '../../db/client';
import { startDnsServer, type DnsServer } from '../../dev/services/dnsServer';
import { startTimeSkippingTestEnvironment } from '../../dev/services/temporal';
import { activitiesForRole } from '../../workers/createWorkers';
import { yieldDomainWorkflowId } from '../../workflows/workflowIds';
import { createTxtLookup } from '../../yield/txtRecords';
import { yieldDomainVerificationWorkflow } from '../../workflows/yieldDomainVerification';
import { upsertMerchantByWallet } from '../../db/merchants';
import { insertYieldDeployment } from '../../db/yieldDeployments';
import { insertYieldDomain } from '../../db/yieldDomains';
import { newVerificationValue, verificationRecordName } from '../../yield/domainVerification';
import { testStack } from '../harness/stack';
import { quietTemporalRuntime } from '../harness/workers';

/**
 * The domain verification workflow against the clock, on Temporal's time-skipping server: a record that
 * never appears fails the domain after seven days; one that appears on day three verifies it then.
 * The TXT records come from a real DNS server on a loopback port.
 */

const HOUR_MS = 3600_000;
let env: TestWorkflowEnvironment;
let db: Db;
let merchantId: string;
let dns: DnsServer;
const records = new Map<string, string[]>();

beforeAll(async () => {
  quietTemporalRuntime();
  env = await startTimeSkippingTestEnvironment();
  db = createDb({ connectionString: testStack().databaseUrl });
  dns = await startDnsServer({ records: (name) => records.get(name) });
  const wallet = `0x${randomUUID().replace(/-/g, '').padEnd(40, '0')}`;
  merchantId = (await upsertMerchantByWallet(db, { walletAddress: wallet, payoutAddress: wallet })).id;
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  await dns?.stop();
  await env?.teardown();
});

/** A pending domain as POST /{id}/domains stores it (the route's own workflow start is not wanted here). */
async function attachDomain() {
  const deployment = await insertYieldDeployment(db, {
    merchantId,
    name: 'Clock',
    chainId: 11155111,
    tokens: ['USDe'],
    branding: {},
  });
  const hostname = `clock-${randomUUID().slice(0, 8)}.example`;
  const row = await insertYieldDomain(db, {
    deploymentId: deployment.id,
    merchantId,
    hostname,
    verificationValue: newVerificationValue(),
  });
  return {
    id: row.id,
    verification: { name: verificationRecordName(hostname), value: row.verification_value },
  };
}

async function runVerification(domainId: string, during?: () => Promise<void>) {
  const taskQueue = `yield-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: require.resolve('../../workflows'),
    activities: activitiesForRole('yield', {
      db,
      temporal: env.client,
      yield: { lookupTxt: createTxtLookup(dns.address) },
    }),
  });
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start(yieldDomainVerificationWorkflow, {
      workflowId: yieldDomainWorkflowId(domainId),
      taskQueue,
      args: [
        { domainId, createdAt: new Date(await env.currentTimeMs()).toISOString(), pollIntervalMs: HOUR_MS },
      ],
    });
    await during?.();
    return handle.result();
  });
}

const domainRow = (id: string) =>
  db.selectFrom('yield_domains').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

it('a TXT record that never appears fails the domain after seven days', async () => {
  const domain = await attachDomain();
  const started = await env.currentTimeMs();
  records.set(domain.verification.name, ['stablepay-verification=not-the-value']);
  await expect(runVerification(domain.id)).resolves.toBe('failed');
  expect((await env.currentTimeMs()) - started).toBeGreaterThanOrEqual(7 * 24 * HOUR_MS);
  expect(await domainRow(domain.id)).toMatchObject({ status: 'failed', verified_at: null });
}, 120_000);

it('a TXT record published on day three verifies the domain then', async () => {
  const domain = await attachDomain();
  const result = await runVerification(domain.id, async () => {
    await env.sleep(3 * 24 * HOUR_MS);
    // Three days of hourly checks found nothing: still pending, not failed.
    expect((await domainRow(domain.id)).status).toBe('pending');
    records.set(domain.verification.name, [domain.verification.value]);
  });
  expect(result).toBe('verified');
  expect(await domainRow(domain.id)).toMatchObject({ status: 'verified', verified_at: expect.any(Date) });
}, 120_000);
