import { generateSigningJwk } from '../../config/signingJwk';
import { TEST_STACK_FILE_VARIABLE, testStack } from './stack';

let sharedSigningKey: Promise<string> | undefined;

/**
 * The environment of a real `api/main.ts` process on the run's shared services: the settings
 * startTestApp gives its in-process app (lifted per-IP allowances, one trusted proxy hop), with one
 * JWT signing key per test process so every replica accepts every other replica's tokens.
 */
export async function apiProcessEnv(env: Record<string, string> = {}): Promise<Record<string, string>> {
  const stack = testStack();
  sharedSigningKey ??= generateSigningJwk('replica-key').then((jwk) => JSON.stringify(jwk));
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    JWT_PRIVATE_JWK: await sharedSigningKey,
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.temporalNamespace,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    SMTP_URL: stack.mail.smtpUrl,
    EMAIL_CODES_PER_IP_PER_HOUR: '100000',
    RATE_LIMIT_LOGIN_PER_MINUTE: '1000000',
    RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: '1000000',
    PAYMASTER_RPC_PER_CLIENT_PER_MINUTE: '10000000',
    YIELD_REDEEM_REQUESTS_PER_MERCHANT_PER_MINUTE: '1000000',
    TRUST_PROXY: '1',
    TEMPORAL_START_TIMEOUT_MS: '20000',
    // The run's signing service lives in the jest parent, beside the reporter and two test workers: on a
    // loaded machine it once took over the 5 s production deadline. The signer-timeout tests set their own.
    SIGNER_TIMEOUT_MS: '20000',
    DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
    ...Object.fromEntries(stack.chains.map((chain) => [`RPC_URL_${chain.chainId}`, chain.rpcUrl])),
    SIGNER_URL: stack.signer.url,
    SIGNER_SHARED_SECRET: stack.signer.sharedSecret,
    ...Object.fromEntries(stack.chains.map((chain) => [`BUNDLER_URL_${chain.chainId}`, chain.bundlerUrl])),
    ...env,
  };
}
