import { setTimeout as delay } from 'node:timers/promises';
import { startDnsServer } from '../dev/services/dnsServer';
import { LOCAL_SETTLEMENT_OPERATOR, LOCAL_YIELD_DEPLOYER } from '../dev/chains/localSettlement';
import { watchBlocks } from './lib/blockWatcher';
import { machineLoad, measureRounds } from './lib/rounds';
import { signUpBenchMerchant } from './lib/merchantApi';
import { percentile, summariseLatencies } from './lib/percentiles';
import { reportBenchmark } from './lib/results';
import { startBenchServices } from './lib/services';
import { startTarget } from './lib/target';
import { startWorkerProcess } from './lib/workerProcess';

/**
 * Yield deployments, in one run:
 * 1. Deploy latency against the block time: POST /{id}/deploy (202) to the first GET that shows
 *    `active`, on the Ethereum Sepolia stand-in with 1 s interval mining, through the production worker
 *    process (operator key) and the API process; in milliseconds and in blocks mined meanwhile.
 * 2. The branded site's GET / (Host: a verified custom domain; it reads each vault's total assets and the
 *    sUSDe rate from the chain) against GET /health of the same API process, same load generator.
 */
const BLOCK_TIME_SEC = 1;
const CHAIN_ID = 11155111;
const DEPLOYMENTS = 8;
const POLL_MS = 50;
const HOSTNAME = 'invest.bench.example';

async function main(): Promise<void> {
  const machineAtStart = machineLoad();
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const services = await startBenchServices({ chains: true, blockTime: BLOCK_TIME_SEC });
    cleanups.unshift(() => services.stop());
    const records = new Map<string, string[]>();
    const dns = await startDnsServer({ records: (name) => records.get(name) });
    cleanups.unshift(() => dns.stop());
    const env = { ...services.env, YIELD_DNS_SERVER: dns.address, YIELD_DOMAIN_POLL_MS: '200' };
    const worker = await startWorkerProcess({
      ...env,
      OPERATOR_PRIVATE_KEY: LOCAL_SETTLEMENT_OPERATOR.privateKey,
      YIELD_DEPLOYER_PRIVATE_KEY: LOCAL_YIELD_DEPLOYER.privateKey,
    });
    cleanups.unshift(() => worker.stop());
    const api = await startTarget('api.ts', [], env);
    cleanups.unshift(() => api.stop());
    const rpcUrl = services.chains.find((chain) => chain.chainId === CHAIN_ID)!.rpcUrl;
    const watcher = await watchBlocks(rpcUrl);
    cleanups.unshift(() => watcher.stop());
    const merchant = await signUpBenchMerchant(api.url);

    const callApi = async (method: string, path: string, json?: unknown) => {
      const response = await fetch(`${api.url}/v1/merchants/me/yield-deployments${path}`, {
        method,
        headers: {
          authorization: merchant.dashboardAuthorization,
          ...(json === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      const body = (await response.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      if (!response.ok)
        throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(body)}`);
      return body;
    };

    const deployOnce = async (index: number) => {
      const draft = await callApi('POST', '', { name: `Bench ${index}`, chainId: CHAIN_ID });
      const startBlock = watcher.head();
      const started = performance.now();
      await callApi('POST', `/${draft.id}/deploy`);
      for (;;) {
        const current = await callApi('GET', `/${draft.id}`);
        if (current.status === 'active') {
          return {
            id: draft.id as string,
            ms: performance.now() - started,
            blocks: Number(watcher.head() - startBlock),
          };
        }
        if (current.status !== 'deploying')
          throw new Error(`deployment ${draft.id} ended ${current.status}: ${current.failureReason}`);
        if (performance.now() - started > 120_000)
          throw new Error(`deployment ${draft.id} not active after 120 s`);
        await delay(POLL_MS);
      }
    };

    await deployOnce(0); // warm-up (workflow bundle, first RPC connections), not counted
    const deployments = [];
    for (let index = 1; index <= DEPLOYMENTS; index += 1) deployments.push(await deployOnce(index));
    const latencies = deployments.map((deployment) => deployment.ms);
    const blocks = deployments.map((deployment) => deployment.blocks);

    // A verified custom domain for the site.
    const siteDeployment = deployments[0]!;
    const domain = await callApi('POST', `/${siteDeployment.id}/domains`, { hostname: HOSTNAME });
    records.set(domain.verification.name, [domain.verification.value]);
    for (;;) {
      const current = await callApi('GET', `/${siteDeployment.id}`);
      if (current.domains[0].status === 'verified') break;
      await delay(100);
    }
    // Alternating rounds; measureRounds throws on any non-2xx answer or failed request.
    const {
      figures: { health, site },
      machine,
    } = await measureRounds(
      {
        health: { url: `${api.url}/health`, connections: 16, durationSec: 5 },
        site: { url: `${api.url}/`, headers: { host: HOSTNAME }, connections: 16, durationSec: 5 },
      },
      2,
    );

    const blockTimeMs = BLOCK_TIME_SEC * 1000;
    reportBenchmark('yield', {
      blockTimeSec: BLOCK_TIME_SEC,
      deployments: DEPLOYMENTS,
      deployLatency: summariseLatencies(latencies),
      blocksMinedDuringDeploy: {
        p50: percentile(blocks, 50),
        p95: percentile(blocks, 95),
        max: Math.max(...blocks),
      },
      machine: { atStart: machineAtStart, atEnd: machineLoad(), ...machine },
      site: { route: 'GET / (Host: verified domain)', ...site },
      baseline: { route: 'GET /health', ...health },
      ratios: {
        deployP50InBlockTimes: percentile(latencies, 50) / blockTimeMs,
        deployP95InBlockTimes: percentile(latencies, 95) / blockTimeMs,
        siteThroughputVsHealth: site.requestsPerSec / health.requestsPerSec,
        siteP99LatencyVsHealth: site.latencyP99Ms / Math.max(health.latencyP99Ms, 0.001),
      },
    });
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
