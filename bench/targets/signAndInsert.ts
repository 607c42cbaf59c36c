import { Pool } from 'pg';
import { serveSigningRoute } from './signingRoute';

/**
 * Second baseline of the paymaster benchmark, for information: the physical floor of a paymaster that
 * accounts durably. The sign-only route (bench/targets/signingRoute.ts) plus one INSERT of the signed
 * answer, committed (synchronous_commit as configured: durable) in its own transaction on the same
 * Postgres as the api, before the answer leaves. The statement is prepared; the pool has the api's
 * default size (db/client.ts).
 */
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required');
const pool = new Pool({ connectionString: databaseUrl, max: 10 });

void pool
  .query(
    `CREATE TABLE IF NOT EXISTS bench_signed_answers (
      id bigserial PRIMARY KEY,
      sender text NOT NULL,
      nonce text NOT NULL,
      paymaster_data text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
  )
  .then(() =>
    serveSigningRoute(
      async ({ sender, nonce, paymasterData }) => {
        await pool.query({
          name: 'bench_insert_signed_answer',
          text: 'INSERT INTO bench_signed_answers (sender, nonce, paymaster_data) VALUES ($1, $2, $3)',
          values: [sender, nonce, paymasterData],
        });
      },
      () => pool.end(),
    ),
  );
