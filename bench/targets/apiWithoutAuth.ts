import type { Middleware } from 'koa';
import { serveApp } from './serveApp';

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

serveApp({ authenticators: { sk: fixedMerchant } });
