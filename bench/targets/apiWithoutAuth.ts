import type { Middleware } from 'koa';
import { loadConfig } from '../../config';
import { createApp } from '../../api/app';
import { createDb } from '../../db/client';
import { createLogger } from '../../api/logger';

/**
 * The same full Koa app as api.ts, except that sk_ routes skip the API-key check: their
 * authenticator sets the fixed merchant BENCH_MERCHANT_ID without reading any credential. The
 * baseline for what the key check costs (bench/auth.bench.ts); built through `createApp`'s
 * `authenticators` hook, so every other middleware and handler is the production code.
 */
const merchantId = process.env.BENCH_MERCHANT_ID;
if (!merchantId) throw new Error('BENCH_MERCHANT_ID is required: the merchant every sk_ route acts for');
const fixedMerchant: Middleware = (ctx, next) => {
  ctx.state.merchantId = merchantId;
  return next();
};

const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' });
const db = createDb({ connectionString: config.DATABASE_URL ?? 'postgres://unused@127.0.0.1:1/unused' });
// As api.ts: access logs are produced at the configured level and written nowhere.
const logger = createLogger({ level: config.LOG_LEVEL }, { write: () => true } as never);
void createApp({ config, db, logger, authenticators: { sk: fixedMerchant } }).then(({ koa }) => {
  const server = koa.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.once('SIGTERM', () => server.close(() => void db.destroy().then(() => process.exit(0))));
});
