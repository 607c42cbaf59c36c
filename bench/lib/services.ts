import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb } from '../../db/client';
import { migrateToLatest } from '../../db/migrate';
import { LOCAL_TESTNET_CHAIN_IDS } from '../../dev/localChains';
import { startLocalChains } from '../../dev/services/localChains';
import { ensureDatabase, startEmbeddedPostgres } from '../../dev/services/postgres';
import { startTemporalDevServer } from '../../dev/services/temporal';
import type { ChainDeployment } from '../../dev/stackDescription';

export interface BenchServices {
  databaseUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  /** The Temporal dev server's process, for its resident memory. */
  temporalPid: number;
  /** The dev server's SQLite file, when it keeps its store in one. */
  temporalDbFile?: string;
  chains: ChainDeployment[];
  /** A deployments file (`{ chains }`) for DEPLOYMENTS_FILE. */
  deploymentsFile: string;
  /** Environment for an api or worker process against these services. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The real services a benchmark measures against, started for the benchmark alone (never the dev
 * stack's, which may be busy): embedded Postgres (migrated), the Temporal dev server, and
 * optionally the local chains with contracts and bundlers.
 */
export async function startBenchServices({
  chains = false,
  bundlers = false,
  blockTime,
  gasLimit,
  temporalStore = 'memory',
}: {
  chains?: boolean;
  /**
   * Where the Temporal dev server keeps its state: `memory` (its default, as in the tests) or `file`, a
   * SQLite file in the bench's temp folder, written without waiting for the disk (WAL, synchronous off:
   * the store is thrown away with the run). In memory the store lives in the server's resident set: 62 MiB
   * per 1,000 waiting workflows against 16 MiB with the file, and a 23 GiB machine ran out of memory on the
   * way to 100,000 (docs/performance.md, "Subscriptions at scale").
   */
  temporalStore?: 'memory' | 'file';
  bundlers?: boolean;
  /** Block gas limit of the chains (mainnet-like background traffic on a 2 s chain needs more than 30M). */
  gasLimit?: number;
  /** Seconds between blocks (interval mining, as in the dev stack); without it every transaction is mined at once. */
  blockTime?: number;
} = {}): Promise<BenchServices> {
  const workDir = await mkdtemp(join(tmpdir(), 'stablepay-bench-'));
  await chmod(workDir, 0o755);
  const temporalDbFile = temporalStore === 'file' ? join(workDir, 'temporal.sqlite') : undefined;
  const [postgres, temporal, local] = await Promise.all([
    startEmbeddedPostgres({ dataDir: join(workDir, 'postgres'), persistent: false }),
    startTemporalDevServer(
      temporalDbFile === undefined
        ? { silent: true }
        : {
            silent: true,
            dbFile: temporalDbFile,
            sqlitePragmas: { journal_mode: 'wal', synchronous: 'off' },
          },
    ),
    chains
      ? startLocalChains({ bundlers, blockTime, gasLimit, chainIds: LOCAL_TESTNET_CHAIN_IDS })
      : Promise.resolve(undefined),
  ]);
  const databaseUrl = await ensureDatabase(postgres.adminUrl, 'stablepay_bench');
  const db = createDb({ connectionString: databaseUrl, maxConnections: 1 });
  await migrateToLatest(db);
  await db.destroy();
  const deploymentsFile = join(workDir, 'deployments.json');
  await writeFile(deploymentsFile, JSON.stringify({ chains: local?.chains ?? [] }));
  return {
    databaseUrl,
    temporalAddress: temporal.address,
    temporalNamespace: temporal.namespace,
    temporalPid: temporal.pid,
    temporalDbFile,
    chains: local?.chains ?? [],
    deploymentsFile,
    env: {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      DEPLOYMENTS_FILE: deploymentsFile,
      LOG_LEVEL: 'warn',
      // Every bench request comes from one IP: the per-IP limit on public session reads (300/min)
      // would answer the load with 429s, measuring the limiter instead of the route.
      RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: '1000000',
      ...Object.fromEntries(
        (local?.chains ?? []).flatMap((chain) => [
          [`RPC_URL_${chain.chainId}`, chain.rpcUrl],
          ...(chain.bundlerUrl ? [[`BUNDLER_URL_${chain.chainId}`, chain.bundlerUrl]] : []),
        ]),
      ),
    },
    async stop() {
      await local?.stop();
      await temporal.stop();
      await postgres.stop();
      // The file store of a large run takes gigabytes.
      if (temporalDbFile !== undefined)
        for (const suffix of ['', '-wal', '-shm']) await rm(`${temporalDbFile}${suffix}`, { force: true });
    },
  };
}
