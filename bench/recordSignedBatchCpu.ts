/**
 * Postgres CPU per recorded signed answer at the function level (issue 46): batches of 1, 10 and 30
 * signed operations recorded by `record_signed_paymaster_operations` (the statement db/paymasterUsage.ts
 * sends), each operation with the six counters a sponsored testnet answer consumes in the paymaster bench
 * (one sender: every item takes the same counters), read as the backend's CPU from /proc. A second
 * connection of the same shape records the same kind of batches beside it when CONCURRENT=1.
 * Run against a migrated database: `DATABASE_URL=… npx tsx bench/recordSignedBatchCpu.ts`
 * (not part of `npm run bench`: it has no baseline; docs/performance.md quotes its ratios).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { cpuSeconds } from './lib/procStats';

const BATCH_SIZES = (process.env.BATCH_SIZES ?? '1,10,30').split(',').map(Number);
const ITEMS_PER_SIZE = Number(process.env.ITEMS ?? 6000);

const BATCH_STATEMENT = `SELECT batch.refused AS denied, batch.stored_result
  FROM record_signed_paymaster_operations($1::integer[], $2::text[], $3::timestamptz[], $4::bigint[],
    $5::bigint[], $6::text[], $7::uuid[], $8::timestamptz[], $9::timestamptz[], $10::uuid[], $11::jsonb[])
    WITH ORDINALITY AS batch(refused, stored_result, position)
  ORDER BY batch.position`;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

interface Setup {
  merchantId: string;
  counters: { key: string; basis: string; amount: string; limit: string }[];
}

async function seed(client: Client): Promise<Setup> {
  const wallet = `0x${hex(20)}`;
  const { rows } = await client.query<{ id: string }>(
    'INSERT INTO merchants (wallet_address, payout_address) VALUES ($1, $1) RETURNING id',
    [wallet],
  );
  const merchantId = rows[0]!.id;
  const sender = `0x${hex(20)}`;
  const big = '100000000000000';
  return {
    merchantId,
    counters: [
      { key: 'platform_budget_usd:testnet', basis: 'cost', amount: '2100', limit: big },
      { key: `merchant_budget_usd:testnet:${merchantId}`, basis: 'cost', amount: '2100', limit: big },
      { key: `merchant_usd:testnet:${merchantId}`, basis: 'charged', amount: '2310', limit: big },
      { key: `client_usd:pmc_bench_${merchantId}`, basis: 'charged', amount: '2310', limit: big },
      { key: `sender_usd:${merchantId}:${sender}`, basis: 'charged', amount: '2310', limit: big },
      { key: `sender_ops:${merchantId}:${sender}`, basis: 'ops', amount: '1', limit: '1000000000' },
    ],
  };
}

function batchValues(setup: Setup, size: number): unknown[] {
  const now = new Date();
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
  const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000).toISOString();
  const validUntil = new Date(now.getTime() + 600_000).toISOString();
  const values: unknown[][] = Array.from({ length: 11 }, () => []);
  for (let item = 1; item <= size; item++) {
    for (const counter of setup.counters) {
      values[0]!.push(item);
      values[1]!.push(counter.key);
      values[2]!.push(counter.basis === 'ops' ? hour : day);
      values[3]!.push(counter.amount);
      values[4]!.push(counter.limit);
      values[5]!.push(counter.basis);
    }
    const holdId = randomUUID();
    values[6]!.push(holdId);
    values[7]!.push(validUntil);
    // Each answer's own now, as the api stamps it (a batch gathers answers over a few milliseconds).
    values[8]!.push(new Date(now.getTime() + item).toISOString());
    values[9]!.push(setup.merchantId);
    values[10]!.push(
      JSON.stringify({
        merchant_id: setup.merchantId,
        client_id: `pmc_bench_${setup.merchantId}`,
        method: 'pm_getPaymasterData',
        chain_id: 84532,
        mode: 'sponsored',
        status: 'submitted',
        reason: null,
        sender: setup.counters[4]!.key.split(':')[2],
        entry_point: '0x4337084d9e255ff0702461cf8895ce9e3b5ff108',
        user_op_hash: `0x${hex(32)}`,
        targets: ['0x1000000000000000000000000000000000000b01'],
        valid_until: validUntil,
        eth_usd_price: '3000.12345678',
        estimated_gas_cost_wei: '700000000000000',
        estimated_cost_usd: '2.100086',
        hold_id: holdId,
        policy_id: null,
        request_fingerprint: hex(32),
        signed_result: {
          paymaster: '0x1000000000000000000000000000000000000001',
          paymasterData: `0x${hex(60)}`,
          paymasterVerificationGasLimit: '0x1',
          paymasterPostOpGasLimit: '0x2',
        },
      }),
    );
  }
  return values;
}

async function main() {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const setup = await seed(client);
  // Warm-up: plans cached, counters created.
  for (let i = 0; i < 20; i++)
    await client.query({ name: 'batch', text: BATCH_STATEMENT, values: batchValues(setup, 10) });
  for (const size of BATCH_SIZES) {
    const batches = Math.ceil(ITEMS_PER_SIZE / size);
    const prepared = Array.from({ length: batches }, () => batchValues(setup, size));
    const cpuBefore = cpuSeconds(backend);
    const started = performance.now();
    for (const values of prepared) {
      const { rows } = await client.query<{ denied: number }>({
        name: 'batch',
        text: BATCH_STATEMENT,
        values,
      });
      if (rows.length !== size || rows.some((row) => row.denied !== 0)) throw new Error('unexpected answer');
    }
    const wallMs = performance.now() - started;
    const cpuMs = (cpuSeconds(backend) - cpuBefore) * 1000;
    const items = batches * size;
    console.log(
      `batch ${String(size).padStart(2)}: ${items} items, backend CPU ${(cpuMs / items).toFixed(3)} ms/item, wall ${(wallMs / items).toFixed(3)} ms/item`,
    );
  }
  await client.end();
}

void main();
