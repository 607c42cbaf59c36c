import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { localErc20GasTokenRates } from '../dev/chains/localPaymasters';
import { loadConfig } from '../config';
import { buildPageScripts } from '../dashboard/buildPageScripts';
import { createDb } from '../db/client';
import { migrateToLatest } from '../db/migrate';
import { TEST_RUN_CHAIN_IDS } from '../dev/localChains';
import { startLocalChains } from '../dev/services/localChains';
import { startMailDev } from '../dev/services/mailDev';
import { ensureDatabase, startEmbeddedPostgres } from '../dev/services/postgres';
import { startTemporalDevServer } from '../dev/services/temporal';
import { startSignerServer } from '../signer/server';
import { TEST_STACK_FILE_VARIABLE, type TestStack } from './harness/stack';
import { registerTeardown } from './harness/teardown';

/**
 * Starts every shared service once per `jest` run: PostgreSQL (DATABASE_URL's server, else
 * embedded), Temporal (TEMPORAL_ADDRESS, else the CLI dev server), the local anvil chains with
 * their contracts and an Alto bundler each, MailDev (the SMTP server e-mail codes go to; its mail is
 * deleted at teardown) and the paymaster signing service; it also brings the page scripts' bundles up to date. Tests read the description through
 * `testStack()` and isolate by data.
 */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const workDir = await mkdtemp(join(tmpdir(), 'stablepay-test-'));
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to enter this folder.
  await chmod(workDir, 0o755);

  const [database, temporal, chains, mail] = await Promise.all([
    startDatabase(workDir),
    startTemporal(),
    startChains(),
    startMail(),
    // The pages inline these bundles: a test run never serves scripts older than their sources (skipped when unchanged).
    buildPageScripts(),
  ]);

  const stackFile = join(workDir, 'stack.json');
  const stack: Omit<TestStack, 'signer'> = {
    databaseUrl: database.url,
    adminDatabaseUrl: database.adminUrl,
    temporalAddress: temporal.address,
    temporalNamespace: temporal.namespace,
    chains,
    mail,
  };
  // The stack file is also the deployments file (its `chains` carry the contracts) the signer reads.
  await writeFile(stackFile, JSON.stringify(stack, null, 2));
  const signer = await startSigner(stackFile, chains);
  await writeFile(stackFile, JSON.stringify({ ...stack, signer } satisfies TestStack, null, 2));
  process.env[TEST_STACK_FILE_VARIABLE] = stackFile;
  process.stdout.write(
    `\nshared test services ready in ${Date.now() - started} ms (${stackFile}); tests run on Node.js ${process.version}\n`,
  );
}

async function startDatabase(workDir: string): Promise<{ url: string; adminUrl: string }> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const server = await startEmbeddedPostgres({ dataDir: join(workDir, 'postgres'), persistent: false });
    registerTeardown(() => server.stop());
    adminUrl = server.adminUrl;
  }
  // A database of its own per run, so a shared DATABASE_URL server is never polluted by old runs.
  const url = await ensureDatabase(adminUrl, `stablepay_test_${randomBytes(4).toString('hex')}`);
  const db = createDb({ connectionString: url, maxConnections: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  if (process.env.DATABASE_URL) {
    const name = new URL(url).pathname.slice(1);
    registerTeardown(async () => (await import('../dev/services/postgres')).dropDatabase(adminUrl, name));
  }
  return { url, adminUrl };
}

async function startTemporal(): Promise<{ address: string; namespace: string }> {
  if (process.env.TEMPORAL_ADDRESS) {
    return { address: process.env.TEMPORAL_ADDRESS, namespace: process.env.TEMPORAL_NAMESPACE || 'default' };
  }
  const server = await startTemporalDevServer({ silent: true });
  registerTeardown(() => server.stop());
  return { address: server.address, namespace: server.namespace };
}

async function startMail(): Promise<TestStack['mail']> {
  const server = await startMailDev();
  registerTeardown(() => server.stop());
  return { smtpUrl: server.smtpUrl, webUrl: server.webUrl };
}

async function startChains(): Promise<TestStack['chains']> {
  const started = Date.now();
  // The shared chains carry the stand-ins; suites that need the real protocols start their own chains.
  const local = await startLocalChains({
    bundlers: true,
    chainIds: TEST_RUN_CHAIN_IDS,
    protocols: 'stand-ins',
  });
  registerTeardown(() => local.stop());
  process.stdout.write(`\nchains, contracts and bundlers ready in ${Date.now() - started} ms\n`);
  return local.chains as TestStack['chains'];
}

/** The signing service, in this (the jest parent) process, holding the local paymasters' signer key. */
async function startSigner(
  deploymentsFile: string,
  chains: TestStack['chains'],
): Promise<TestStack['signer']> {
  const sharedSecret = randomBytes(32).toString('hex');
  const erc20Tokens = localErc20GasTokenRates(chains);
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
    SIGNER_SHARED_SECRET: sharedSecret,
    SIGNER_ERC20_TOKENS: JSON.stringify(erc20Tokens),
    // Tests run the API on clocks of their own days (limit windows apart): its validUntil may be years ahead.
    SIGNER_MAX_VALIDITY_SEC: String(10 * 365 * 24 * 3600),
    DEPLOYMENTS_FILE: deploymentsFile,
    ...Object.fromEntries(chains.map((chain) => [`RPC_URL_${chain.chainId}`, chain.rpcUrl])),
  });
  const server = await startSignerServer({ config, port: 0 });
  registerTeardown(() => server.stop());
  return { url: server.url, sharedSecret, address: LOCAL_PAYMASTER_SIGNER.address, erc20Tokens };
}
