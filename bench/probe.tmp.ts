import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { createDb } from '../db/client';
import { expectSignedResult, measureRpcLoad, printFigures, rpcBodies, seedSponsoringMerchant } from './lib/paymasterRpc';
import { startBenchServices } from './lib/services';
import { startTarget } from './lib/target';

async function main() {
  const services = await startBenchServices({ chains: true });
  const db = createDb({ connectionString: services.databaseUrl, maxConnections: 2 });
  const { clientId } = await seedSponsoringMerchant(db);
  const sharedSecret = randomBytes(32).toString('hex');
  const signerEnv = { SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey, LOG_LEVEL: 'info' };
  const signer = await startTarget('signer.ts', [], { ...services.env, ...signerEnv, SIGNER_SHARED_SECRET: sharedSecret });
  const api = await startTarget('api.ts', [], {
    ...services.env, LOG_LEVEL: 'info', SIGNER_URL: signer.url, SIGNER_SHARED_SECRET: sharedSecret,
    PAYMASTER_PLATFORM_PER_SENDER_HOURLY_OPS: '1000000', PAYMASTER_PLATFORM_PER_SENDER_DAILY_USD: '100000000',
    PAYMASTER_PLATFORM_DAILY_BUDGET_USD: '100000000', PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD: '100000000',
    PAYMASTER_PLATFORM_PER_MERCHANT_DAILY_USD: '100000000', PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: '10000',
    PAYMASTER_RPC_PER_CLIENT_PER_MINUTE: '10000000',
  });
  const bodies = rpcBodies('pm_getPaymasterData');
  const headers = { 'x-client-id': clientId };
  await expectSignedResult(`${api.url}/v1/paymaster/rpc`, headers, bodies());
  const stats = async () => (await sql<{ xact: string; ins: string }>`SELECT xact_commit::text AS xact, tup_inserted::text AS ins FROM pg_stat_database WHERE datname = current_database()`.execute(db)).rows[0]!;
  {
    await sql`CREATE TABLE IF NOT EXISTS probe_t (x int)`.execute(db);
    let t = performance.now();
    for (let i = 0; i < 100; i++) await sql`SELECT 1`.execute(db);
    const selectMs = (performance.now() - t) / 100;
    t = performance.now();
    for (let i = 0; i < 100; i++) await sql`INSERT INTO probe_t VALUES (1)`.execute(db);
    const insertMs = (performance.now() - t) / 100;
    const rpc = services.chains.find((c) => c.chainId === 84532)!.rpcUrl;
    t = performance.now();
    for (let i = 0; i < 100; i++) await (await fetch(rpc, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) })).text();
    const anvilMs = (performance.now() - t) / 100;
    const signerBody = (nonce: number) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'signer_signPaymasterData', params: [{ chainId: 84532, entryPoint: '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108', entryPointVersion: '0.8', mode: 'sponsored', validAfter: 0, validUntil: Math.floor(Date.now() / 1000) + 600, userOp: { sender: '0x4000000000000000000000000000000000000b02', nonce: '0x' + nonce.toString(16), callData: '0x', callGasLimit: '0x30000', verificationGasLimit: '0x30000', preVerificationGas: '0x10000', maxFeePerGas: '0x77359400', maxPriorityFeePerGas: '0x3b9aca00' } }] });
    t = performance.now();
    let last = '';
    for (let i = 0; i < 100; i++) last = await (await fetch(`${signer.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${sharedSecret}` }, body: signerBody(i + 1000000) })).text();
    const signerMs = (performance.now() - t) / 100;
    t = performance.now();
    for (let i = 0; i < 100; i++) await (await fetch(`${api.url}/health`)).text();
    const healthMs = (performance.now() - t) / 100;
    process.stdout.write(`SELECT 1 ${selectMs.toFixed(2)} ms, INSERT commit ${insertMs.toFixed(2)} ms, anvil eth_blockNumber ${anvilMs.toFixed(2)} ms, signer ${signerMs.toFixed(2)} ms (${last.slice(0, 80)}), api /health ${healthMs.toFixed(2)} ms\n`);
  }
  // Sequential requests: PG transactions per request.
  await delay(1000);
  const tables = async () => new Map((await sql<{ relname: string; v: string }>`SELECT relname, (coalesce(seq_scan,0) + coalesce(idx_scan,0))::text || ' ' || n_tup_ins::text || ' ' || n_tup_upd::text || ' ' || n_tup_del::text AS v FROM pg_stat_user_tables`.execute(db)).rows.map((r) => [r.relname, r.v.split(' ').map(Number)]));
  const t0s = await tables();
  const s0 = await stats();
  const N = 200;
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const r = await fetch(`${api.url}/v1/paymaster/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: bodies() });
    await r.text();
  }
  const seqMs = (performance.now() - t0) / N;
  await delay(1500);
  const s1 = await stats();
  const t1s = await tables();
  for (const [name, after] of t1s) { const before = t0s.get(name) ?? [0, 0, 0, 0]; const d = after.map((x, i) => (x - before[i]!) / N); if (d.some((x) => x > 0)) process.stdout.write(`  ${name}: scans ${d[0]!.toFixed(2)} ins ${d[1]!.toFixed(2)} upd ${d[2]!.toFixed(2)} del ${d[3]!.toFixed(2)} per request\n`); }
  process.stdout.write(`sequential: ${seqMs.toFixed(2)} ms/request; PG transactions per request ${((Number(s1.xact) - Number(s0.xact) - 1) / N).toFixed(2)}; tuples inserted per request ${((Number(s1.ins) - Number(s0.ins)) / N).toFixed(2)}\n`);
  const figures = await measureRpcLoad({ url: api.url, path: '/v1/paymaster/rpc', headers, nextBody: bodies, connections: 32, durationSec: Number(process.env.PROBE_SEC ?? 10) });
  printFigures('pm_getPaymasterData', figures);
  await api.stop(); await signer.stop();
  await db.destroy(); await delay(300);
  await services.stop();
}
void main().catch((e) => { console.error(e); process.exit(1); });
