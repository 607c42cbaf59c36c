import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deployLocalChain } from '../chain/deployLocalChain';
import { createDb } from '../db/client';
import { migrateToLatest } from '../db/migrate';
import { ANVIL_DEV_ACCOUNTS, startAnvilChains } from '../dev/services/anvil';
import { ensureDatabase, startEmbeddedPostgres } from '../dev/services/postgres';
import { startTemporalDevServer } from '../dev/services/temporal';
import { LOCAL_CHAINS } from '../dev/localChains';
import { TEST_STACK_FILE_VARIABLE, type TestStack } from './harness/stack';
import { registerTeardown } from './harness/teardown';

/**
 * Starts every shared service once per `jest` run: PostgreSQL (DATABASE_URL's server, else
 * embedded), Temporal (TEMPORAL_ADDRESS, else the CLI dev server), and the local anvil chains with
 * their contracts. Tests read the description through `testStack()` and isolate by data.
 */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const workDir = await mkdtemp(join(tmpdir(), 'stablepay-test-'));
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to enter this folder.
  await chmod(workDir, 0o755);

  const [database, temporal, chains] = await Promise.all([startDatabase(workDir), startTemporal(), startChains()]);

  const stack: TestStack = {
    databaseUrl: database.url,
    adminDatabaseUrl: database.adminUrl,
    temporalAddress: temporal.address,
    temporalNamespace: temporal.namespace,
    chains,
  };
  const stackFile = join(workDir, 'stack.json');
  await writeFile(stackFile, JSON.stringify(stack, null, 2));
  process.env[TEST_STACK_FILE_VARIABLE] = stackFile;
  process.stdout.write(`\nshared test services ready in ${Date.now() - started} ms (${stackFile})\n`);
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

async function startChains(): Promise<TestStack['chains']> {
  const anvil = await startAnvilChains({ chains: LOCAL_CHAINS.map(({ chainId }) => ({ chainId })), silent: true });
  registerTeardown(() => anvil.stop());
  const deployer = ANVIL_DEV_ACCOUNTS[0]!;
  return Promise.all(
    anvil.chains.map(async ({ chainId, rpcUrl }) => ({
      chainId,
      network: LOCAL_CHAINS.find((chain) => chain.chainId === chainId)!.network,
      rpcUrl,
      contracts: await deployLocalChain({ rpcUrl, chainId, deployerPrivateKey: deployer.privateKey }),
    })),
  );
}
