/**
 * CPU per signed answer of each process on the paymaster's path (api, signing service, Postgres), read
 * from /proc over one 8 s `pm_getPaymasterData` load at 32 connections after a warm-up: the figure
 * docs/performance.md "Paymaster" compares between commits, steadier on a shared machine than req/s.
 * With `NODE_OPTIONS="-r ./bench/lib/cpuProfilePreload.cjs" PROFILE_TARGETS=api.ts,signer.ts` the
 * targets also write CPU profiles of the measured window to PROFILE_DIR (default /tmp).
 * The api reaches the signer on its Unix-domain socket, as `npm start` runs them; `SIGNER_LEG=tcp` puts it
 * on the signer's TCP port instead (A/B runs of the socket's worth). The api reaches Postgres over TCP
 * unless `PG_LEG=socket`: then on the server's Unix-domain socket (localPostgresSocketUrl).
 * Run: `npx tsx bench/paymasterCpuPerAnswer.ts` (not part of `npm run bench`: it has no baseline).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { createDb } from '../db/client';
import {
  expectSignedResult,
  GENEROUS_PAYMASTER_LIMITS,
  measureRpcLoad,
  rpcBodies,
  seedSponsoringMerchant,
} from './lib/paymasterRpc';
import { startBenchServices } from './lib/services';
import { startTarget } from './lib/target';
import { machineLoad } from './lib/rounds';
import { cpuSeconds, cpuSecondsWithChildren, parentOf } from './lib/procStats';
import { localPostgresSocketUrl } from '../dev/services/postgresSocket';

const cpuMs = (pid: number) => cpuSeconds(pid) * 1000;
const cpuMsWithChildren = (pid: number) => cpuSecondsWithChildren(pid) * 1000;

/**
 * The target's own node process: tsx's cli, the process `startTarget` spawned, runs the script as its
 * child. Found by parent, not by name: another bench's targets (a concurrent run, or one left behind) run
 * the same script.
 */
const childOf = (parentPid: number): number => {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (parentOf(Number(entry)) === parentPid) return Number(entry);
    } catch {
      // The process exited between the listing and the read.
    }
  }
  throw new Error(`no child of process ${parentPid}`);
};

async function main() {
  const services = await startBenchServices({ chains: true });
  const db = createDb({ connectionString: services.databaseUrl, maxConnections: 2 });
  const { clientId } = await seedSponsoringMerchant(db);
  const env = {
    ...services.env,
    SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
    LOG_LEVEL: 'info',
  };
  const secret = randomBytes(32).toString('hex');
  const socketPath = join(tmpdir(), `bench-signer-cpu-${process.pid}.sock`);
  const signer = await startTarget('signer.ts', [], {
    ...env,
    SIGNER_SHARED_SECRET: secret,
    SIGNER_SOCKET_PATH: socketPath,
  });
  const leg = process.env.SIGNER_LEG === 'tcp' ? 'tcp' : 'socket';
  const pgLeg = process.env.PG_LEG === 'socket' ? 'socket' : 'tcp';
  const api = await startTarget('api.ts', [], {
    ...env,
    ...(pgLeg === 'socket' && { DATABASE_URL: localPostgresSocketUrl(services.databaseUrl) }),
    SIGNER_URL: leg === 'tcp' ? signer.url : `unix://${socketPath}`,
    SIGNER_SHARED_SECRET: secret,
    ...GENEROUS_PAYMASTER_LIMITS,
  });
  const bodies = rpcBodies('pm_getPaymasterData');
  await expectSignedResult(`${api.url}/v1/paymaster/rpc`, { 'x-client-id': clientId }, bodies());
  const load = () =>
    measureRpcLoad({
      url: api.url,
      path: '/v1/paymaster/rpc',
      headers: { 'x-client-id': clientId },
      nextBody: bodies,
      connections: 32,
      durationSec: 8,
    });
  await load(); // warm-up
  const apiPid = childOf(api.pid);
  // The signer target announces its own pid.
  const signerPid = signer.pid;
  const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
  const postmaster = parentOf(rows[0]!.pid);
  const before = { api: cpuMs(apiPid), signer: cpuMs(signerPid), pg: cpuMsWithChildren(postmaster) };
  if (process.env.PROFILE_TARGETS) {
    process.kill(apiPid, 'SIGUSR2');
    process.kill(signerPid, 'SIGUSR2');
  }
  const load0 = machineLoad();
  const figures = await load();
  const after = { api: cpuMs(apiPid), signer: cpuMs(signerPid), pg: cpuMsWithChildren(postmaster) };
  const answers = figures.resultsIncludingWarmUp;
  console.log(
    JSON.stringify({
      signerLeg: leg,
      postgresLeg: pgLeg,
      requestsPerSec: figures.requestsPerSec,
      p99: figures.latencyP99Ms,
      answers,
      jsonRpcErrors: figures.jsonRpcErrors,
      cpuMsPerAnswer: {
        api: (after.api - before.api) / answers,
        signer: (after.signer - before.signer) / answers,
        postgres: (after.pg - before.pg) / answers,
      },
      load: [load0.loadAverage1m, machineLoad().loadAverage1m],
    }),
  );
  await api.stop();
  await signer.stop();
  await db.destroy();
  await delay(300);
  await services.stop();
}
void main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
