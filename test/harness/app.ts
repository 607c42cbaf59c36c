import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../config';
import { createApp } from '../../api/app';
import { createApiServer } from '../../api/httpServer';
import { generateSigningJwk } from '../../config/signingJwk';
import type { ApiKeyLookups } from '../../api/auth/apiKeyCache';
import type { CachedLookups } from '../../api/auth/listenedCache';
import type { PaymasterClientRow } from '../../db/paymasterClients';
import type { MerchantPaymasterConfig } from '../../db/paymasterMerchantConfig';
import type { AnyRoute } from '../../api/routing/route';
import { createDb, type Db } from '../../db/client';
import { createLogger } from '../../logging/logger';
import { TEST_STACK_FILE_VARIABLE, testStack } from './stack';

export interface TestApp {
  baseUrl: string;
  db: Db;
  config: Config;
  routes: AnyRoute[];
  /** The app's sk_ key lookups (cache stats); apps built by hand may leave it out. */
  apiKeys?: ApiKeyLookups;
  /** The paymaster client cache of this instance (LISTEN/NOTIFY-invalidated). */
  paymasterClients?: CachedLookups<PaymasterClientRow>;
  /** The merchants' paymaster configuration cache of this instance (LISTEN/NOTIFY-invalidated, issue 46). */
  paymasterConfigs?: CachedLookups<MerchantPaymasterConfig>;
  /** Every log line the app wrote, for assertions that secrets never reach the logs. */
  logLines: string[];
  /** fetch against the app with JSON helpers. */
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

let sharedSigningKey: Promise<string> | undefined;

/** Builds the real Koa app against the shared test services and serves it on a free port. */
export async function startTestApp(
  env: Record<string, string> = {},
  { now }: { now?: () => Date } = {},
): Promise<TestApp> {
  const stack = testStack();
  // One signing key per test process, so tokens from one app instance work on another (e.g. a later clock).
  sharedSigningKey ??= generateSigningJwk('test-key').then((jwk) => JSON.stringify(jwk));
  const config = loadConfig({
    JWT_PRIVATE_JWK: await sharedSigningKey,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.temporalNamespace,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    SMTP_URL: stack.mail.smtpUrl,
    // Every test request comes from 127.0.0.1: the per-IP allowance of e-mail codes is the one test's business.
    EMAIL_CODES_PER_IP_PER_HOUR: '100000',
    // Likewise the per-IP, per-client and per-merchant request rates (the rate tests set their own), and tests pick
    // their client IP with X-Forwarded-For (one trusted proxy hop).
    RATE_LIMIT_LOGIN_PER_MINUTE: '1000000',
    RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: '1000000',
    PAYMASTER_RPC_PER_CLIENT_PER_MINUTE: '10000000',
    YIELD_REDEEM_REQUESTS_PER_MERCHANT_PER_MINUTE: '1000000',
    TRUST_PROXY: '1',
    // The run shares two cores with anvil, Alto and Temporal: a workflow start can take seconds there.
    // The 2 s production deadline is the fail-fast tests' subject; they set it themselves.
    TEMPORAL_START_TIMEOUT_MS: '20000',
    // The run's signing service lives in the jest parent, beside the reporter and two test workers: on a
    // loaded machine it once took over the 5 s production deadline. The signer-timeout tests set their own.
    SIGNER_TIMEOUT_MS: '20000',
    DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
    // Smart-contract-wallet logins verify through the local chains.
    ...Object.fromEntries(stack.chains.map((chain) => [`RPC_URL_${chain.chainId}`, chain.rpcUrl])),
    // The paymaster: the run's signing service and each local chain's Alto bundler.
    SIGNER_URL: stack.signer.url,
    SIGNER_SHARED_SECRET: stack.signer.sharedSecret,
    ...Object.fromEntries(stack.chains.map((chain) => [`BUNDLER_URL_${chain.chainId}`, chain.bundlerUrl])),
    ...env,
  });
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: config.LOG_LEVEL }, sink);
  const db = createDb({ connectionString: config.DATABASE_URL ?? stack.databaseUrl, maxConnections: 5 });
  const {
    koa,
    routes,
    apiKeys,
    paymasterClients,
    paymasterConfigs,
    close: closeApp,
  } = await createApp({ config, db, logger, now });
  const { server } = createApiServer(koa.callback());
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    db,
    config,
    routes,
    apiKeys,
    paymasterClients,
    paymasterConfigs,
    logLines,
    async request(path, init = {}) {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined) headers.set('content-type', 'application/json');
      const response = await fetch(`${baseUrl}${path}`, {
        ...rest,
        headers,
        body: json !== undefined ? JSON.stringify(json) : rest.body,
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      return { status: response.status, headers: response.headers, text, body };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeApp();
      await db.destroy();
    },
  };
}
