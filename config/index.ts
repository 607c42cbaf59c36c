import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { KNOWN_CHAIN_IDS, type KnownChainId } from './networks';

/**
 * The one place that reads the environment. Every process (api, worker, signer, dev stack)
 * calls `loadConfig`; a bad or missing value names the variable and stops the process.
 */

// Chain ids the service knows (config/networks.ts, static facts importing nothing): each gets optional
// per-chain variables such as `RPC_URL_<chainId>`.

const port = z.coerce.number().int().min(1).max(65535);
const url = z.string().url();
const booleanFlag = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

/** Any-case 0x address, kept as written (consumers compare case-insensitively or checksum it). */
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address');

/** Platform markup on sponsored gas (10 %); the receipt tracker's fallback when not wired from config. */
export const DEFAULT_PAYMASTER_MARKUP_BPS = 1000;

/** `PAYMASTER_DELEGATION_MANAGER_<chainId>` overrides the default for one chain. */
const delegationManagerVariables = Object.fromEntries(
  KNOWN_CHAIN_IDS.map((chainId) => [`PAYMASTER_DELEGATION_MANAGER_${chainId}`, evmAddress.optional()]),
) as Record<`PAYMASTER_DELEGATION_MANAGER_${KnownChainId}`, z.ZodOptional<typeof evmAddress>>;

/** `BUNDLER_URL_<chainId>`: the ERC-4337 bundler the paymaster proxy relays to; may carry the provider's API key. */
const bundlerUrlVariables = Object.fromEntries(
  KNOWN_CHAIN_IDS.map((chainId) => [`BUNDLER_URL_${chainId}`, url.optional()]),
) as Record<`BUNDLER_URL_${KnownChainId}`, z.ZodOptional<typeof url>>;

/**
 * SIGNER_ERC20_TOKENS: JSON `{ "<chainId>": { "<token address>": "<exchange rate>" } }`, the tokens the
 * signer accepts for ERC-20 gas and their rates (token base units per 1e18 wei, a positive integer string).
 */
const erc20TokenRates = z.string().transform((text, ctx) => {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON' });
    return z.NEVER;
  }
  const parsed = z
    .record(
      z.string().regex(/^[1-9]\d*$/, 'chain id keys must be positive integers'),
      z.record(evmAddress, z.string().regex(/^[1-9]\d*$/, 'rates must be positive integer strings')),
    )
    .safeParse(raw);
  if (!parsed.success) {
    ctx.addIssue({ code: 'custom', message: parsed.error.issues.map((issue) => issue.message).join('; ') });
    return z.NEVER;
  }
  return parsed.data;
});

/**
 * PAYMASTER_TOKEN_USD_FEEDS: JSON `{ "<chainId>": { "<token address>": "<aggregator address>" } }`, the
 * Chainlink-style USD feed (8 decimals) of each ERC-20 gas token; a stablecoin without one is valued at its
 * 1 USD peg (docs/paymaster.md "ERC-20 mode", ERC-20 rates).
 */
const tokenUsdFeeds = z.string().transform((text, ctx) => {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON' });
    return z.NEVER;
  }
  const parsed = z
    .record(
      z.string().regex(/^[1-9]\d*$/, 'chain id keys must be positive integers'),
      z.record(evmAddress, evmAddress),
    )
    .safeParse(raw);
  if (!parsed.success) {
    ctx.addIssue({ code: 'custom', message: parsed.error.issues.map((issue) => issue.message).join('; ') });
    return z.NEVER;
  }
  return parsed.data;
});

/** A 32-byte key written as 64 hex characters or as base64; undefined when it is neither. */
export function decodeEncryptionKey(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/]{43}=?$/.test(text) || /^[A-Za-z0-9_-]{43}$/.test(text)) {
    const key = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
    return key.length === 32 ? key : undefined;
  }
  return undefined;
}

/** Positive decimal USD, at most 6 fractional digits (docs/service-contract.md "Conventions" amounts). */
const usdLimit = z
  .string()
  .regex(/^(?:0|[1-9]\d{0,9})(?:\.\d{1,6})?$/, 'must be a decimal USD amount with at most 6 decimals')
  .refine((text) => !/^0(?:\.0+)?$/.test(text), 'must be positive');

/** `PAYMASTER_PRICE_FEED_<chainId>`: the ETH/USD aggregator of a chain, overriding the deployments' `priceFeed`. */
const priceFeedVariables = Object.fromEntries(
  KNOWN_CHAIN_IDS.map((chainId) => [`PAYMASTER_PRICE_FEED_${chainId}`, evmAddress.optional()]),
) as Record<`PAYMASTER_PRICE_FEED_${KnownChainId}`, z.ZodOptional<typeof evmAddress>>;

/** `PLATFORM_TREASURY_ADDRESS_<chainId>`: where top-ups paid on that chain settle (billing/platformTreasury.ts). */
const treasuryVariables = Object.fromEntries(
  KNOWN_CHAIN_IDS.map((chainId) => [`PLATFORM_TREASURY_ADDRESS_${chainId}`, evmAddress.optional()]),
) as Record<`PLATFORM_TREASURY_ADDRESS_${KnownChainId}`, z.ZodOptional<typeof evmAddress>>;

const rpcUrlVariables = Object.fromEntries(
  KNOWN_CHAIN_IDS.map((chainId) => [`RPC_URL_${chainId}`, url.optional()]),
) as Record<`RPC_URL_${KnownChainId}`, z.ZodOptional<typeof url>>;

const lateWatchSeconds = z.coerce
  .number()
  .int()
  .min(0)
  .max(365 * 24 * 3600);

/** `CHAIN_MONITOR_LATE_WATCH_SEC_<chainId>`: one chain's late window, over CHAIN_MONITOR_LATE_WATCH_SEC. */
const lateWatchByChainVariables = Object.fromEntries(
  KNOWN_CHAIN_IDS.map((chainId) => [`CHAIN_MONITOR_LATE_WATCH_SEC_${chainId}`, lateWatchSeconds.optional()]),
) as Record<
  `CHAIN_MONITOR_LATE_WATCH_SEC_${(typeof KNOWN_CHAIN_IDS)[number]}`,
  z.ZodOptional<typeof lateWatchSeconds>
>;

/** The per-chain late windows that are set, by chain id. */
export function lateWatchSecByChain(config: Config): Partial<Record<number, number>> {
  return Object.fromEntries(
    KNOWN_CHAIN_IDS.flatMap((chainId) => {
      const seconds = config[`CHAIN_MONITOR_LATE_WATCH_SEC_${chainId}`];
      return seconds === undefined ? [] : [[chainId, seconds]];
    }),
  );
}

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PORT: port.default(3000),
  PUBLIC_BASE_URL: url.optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^\s:]+:\d+$/, 'must be host:port')
    .default('localhost:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  /**
   * TLS to the Temporal frontend (Temporal Cloud, a cluster behind TLS). `TEMPORAL_TLS=true` alone: TLS
   * with the system's roots. Client certificate and key files (both or neither) add mTLS, as Temporal
   * Cloud's certificate authentication needs; a CA file pins the server's root; a server name overrides
   * the name checked against the server's certificate (SNI). Any of them turns TLS on.
   */
  TEMPORAL_TLS: booleanFlag.optional(),
  TEMPORAL_TLS_CERT_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_CA_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /**
   * How long a request waits for Temporal to accept a workflow start or signal. Past it, a session is
   * still stored (201; the reconciler starts its workflow) and a retry answers 503 with Retry-After.
   */
  TEMPORAL_START_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  /** Prepended to every task queue name, so several deployments (or test runs) can share a namespace. */
  TEMPORAL_TASK_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]*$/, 'must be letters, digits, ".", "_" or "-"')
    .default(''),
  /** How long a query waits for a free pooled connection (or a new one) before the request answers 503. */
  DATABASE_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  /** Server-side `statement_timeout` (and a client-side deadline 1 s later, for a server that stopped answering). */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** Server-side `idle_in_transaction_session_timeout`: a transaction left open is rolled back after this. */
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  /** Deadline of each dependency check of `GET /ready` (Postgres, Temporal, the signer). */
  READY_CHECK_TIMEOUT_MS: z.coerce.number().int().min(50).max(10_000).default(1_000),
  /**
   * Api only: after SIGTERM/SIGINT, how long a replica keeps serving while `/ready` answers 503, so the
   * load balancer notices (HAProxy checks every second, two failures take it out) before it stops.
   */
  API_DRAIN_MS: z.coerce.number().int().min(0).max(120_000).default(5_000),
  /** Api only: from SIGTERM/SIGINT, the most the drain and the requests in flight may take before exit. */
  API_STOP_DEADLINE_MS: z.coerce.number().int().min(1_000).max(300_000).default(20_000),
  /**
   * Worker only: from SIGTERM/SIGINT, the most its stop may take. Polling stops at once; activities in
   * flight get 10 s to finish (then are cancelled and retried elsewhere), workflow tasks finish.
   */
  WORKER_STOP_DEADLINE_MS: z.coerce.number().int().min(1_000).max(300_000).default(20_000),
  /**
   * OTLP/HTTP collector base URL (traces go to `<url>/v1/traces`). Set, the api and the worker export
   * OpenTelemetry traces; unset (the default), no tracer, interceptor or instrumentation is installed.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: url.optional(),
  /**
   * How many reverse proxies in front of the api append to X-Forwarded-For; the client IP (per-IP limits)
   * is the address the outermost of them saw. 0: the header is ignored and the peer address is the IP.
   */
  TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  /** Per client IP, for the whole service (every api replica together): login-payload, verify and the e-mail login routes. */
  RATE_LIMIT_LOGIN_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(30),
  /** Per client IP, for the whole service: public session read and status, the checkout page and the yield sites together. */
  RATE_LIMIT_PUBLIC_SESSION_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(300),
  /** Per paymaster client id, for the whole service: paymaster RPC and bundler proxy requests together. */
  PAYMASTER_RPC_PER_CLIENT_PER_MINUTE: z.coerce.number().int().min(1).max(10_000_000).default(1200),
  /** Dry runs (pm_validateSponsorshipPolicies and the dashboard's check) per paymaster client a minute. */
  PAYMASTER_DRY_RUNS_PER_CLIENT_PER_MINUTE: z.coerce.number().int().min(1).max(10_000_000).default(30),
  /** Manual webhook re-dispatches (retry-webhook) of one session per UTC hour. */
  WEBHOOK_RETRIES_PER_SESSION_PER_HOUR: z.coerce.number().int().min(1).max(10_000).default(10),
  /** Bearer token /metrics requires; unset, /metrics is off in production and open elsewhere. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Worker only: port of its readiness endpoint (`GET /ready`); unset, the worker opens none. */
  WORKER_READY_PORT: port.optional(),
  /** Deployment addresses per chain (the dev stack writes .dev/stack.json; production ships its own file). */
  DEPLOYMENTS_FILE: z.string().min(1).optional(),
  /**
   * The signing service: `http(s)://host:port`, or `unix:///path/to/signer.sock` when it runs on this host
   * (its SIGNER_SOCKET_PATH): no TCP on the path every signed answer takes.
   */
  SIGNER_URL: url
    .refine((value) => /^(https?:\/\/|unix:\/\/\/)/.test(value), {
      message: 'must be http://, https:// or unix:///path/to/signer.sock',
    })
    .optional(),
  SIGNER_SHARED_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  SIGNER_PORT: port.default(3100),
  /** Interface the signer process listens on; keep it private (loopback or an internal network). */
  SIGNER_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * The signer process also listens on this Unix-domain socket (mode 0600: this user's processes only),
   * for an api on the same host (SIGNER_URL=unix://<path>). At most 100 bytes (the kernel's limit is 107).
   */
  SIGNER_SOCKET_PATH: z
    .string()
    .startsWith('/', 'must be an absolute path')
    .max(100, 'must be at most 100 bytes (a socket path is limited to 107)')
    .optional(),
  /** The paymaster signing key (0x + 64 hex); only the signer process reads it. */
  SIGNER_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')
    .optional(),
  SIGNER_ERC20_TOKENS: erc20TokenRates.optional(),
  /**
   * signer: an exchange rate the API asks for must lie within this band around the token's configured rate
   * (basis points: 30000 signs from a third to three times it); a request without one gets the configured rate.
   */
  SIGNER_ERC20_RATE_BAND_BPS: z.coerce.number().int().min(10_000).max(1_000_000).default(30_000),
  /** signer: the latest validUntil it signs, in seconds from its own clock. */
  SIGNER_MAX_VALIDITY_SEC: z.coerce
    .number()
    .int()
    .min(60)
    .max(10 * 365 * 24 * 3600)
    .default(3600),
  /** signer: its own fee bound, in basis points of the chain's current fees (as PAYMASTER_FEE_BOUND_BPS). */
  SIGNER_FEE_BOUND_BPS: z.coerce.number().int().min(10_000).max(1_000_000).default(50_000),
  /** signer: most gas (every limit plus preVerificationGas) one operation it signs may carry. */
  SIGNER_MAX_OPERATION_GAS: z.coerce.number().int().min(100_000).max(1_000_000_000).default(30_000_000),
  /** signer: the share of the paymaster's EntryPoint deposit one operation's maximum cost may take, in basis points. */
  SIGNER_MAX_DEPOSIT_SHARE_BPS: z.coerce.number().int().min(1).max(10_000).default(1000),
  /** How long the API waits for the signing service before answering paymaster_upstream_error. */
  SIGNER_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(5_000),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  /** Short commit id reported by /health; read from git when unset. */
  REVISION: z
    .string()
    .regex(/^[0-9a-f]{7,40}$/, 'must be a hex commit id')
    .optional(),
  /** Private JWK (JSON, ES256, with `kid`) that signs merchant session tokens. Generated per process when unset outside production. */
  JWT_PRIVATE_JWK: z.string().min(1).optional(),
  /** JSON array of public JWKs still accepted (keys being rotated out). */
  JWT_VERIFICATION_JWKS: z.string().min(1).optional(),
  JWT_TTL_SEC: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 24 * 3600)
    .default(24 * 3600),
  /** Chain whose RPC verifies smart-contract-wallet login signatures when the payload names none. */
  LOGIN_DEFAULT_CHAIN_ID: z.coerce.number().int().positive().default(1),
  /** The settlement operator key: the only key allowed to flush forwarders (swap, stake, bridge). */
  OPERATOR_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')
    .optional(),
  /**
   * The key that deploys merchants' yield vault sets through the factory: an account apart from settlement
   * (never OPERATOR_PRIVATE_KEY), so vault gas and nonces never touch the flushes. Required in production
   * next to OPERATOR_PRIVATE_KEY; unset elsewhere, the worker deploys no vaults. A set's addresses depend on
   * it (the factory salts by caller): change it only with no deployment deploying.
   */
  YIELD_DEPLOYER_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')
    .optional(),
  /**
   * The subscription executor's key (issue 42): the delegate of every customer's periodic permission, which
   * sends each period's `redeemDelegations` (docs/operations.md "Subscriptions"). Its own account, never
   * OPERATOR_PRIVATE_KEY or YIELD_DEPLOYER_PRIVATE_KEY, so charges never wait on settlement nonces. Worker
   * only; unset, the worker charges no subscription (a due period fails with the reason and is retried).
   */
  SUBSCRIPTION_EXECUTOR_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')
    .optional(),
  /**
   * The executor's address, for the api (which never holds the key): listed per chain in `GET /v1/config`
   * and the delegate every subscribe request's permission must name. Unset, nobody can subscribe.
   */
  SUBSCRIPTION_EXECUTOR_ADDRESS: evmAddress.optional(),
  /** Vault deploys (POST …/deploy accepted) one merchant may queue per UTC day; the next answers 429. */
  YIELD_DEPLOYS_PER_MERCHANT_PER_DAY: z.coerce.number().int().min(1).default(10),
  /** Seconds a failed deployment waits before it may be deployed again (429 with Retry-After until then). */
  YIELD_REDEPLOY_BACKOFF_SEC: z.coerce.number().int().min(0).default(900),
  /**
   * Vault deploys (POST …/deploy accepted) all merchants together may queue per chain and UTC day: the
   * platform's deployer pays each, and a merchant is only a new wallet key away (security review III, finding 2).
   */
  YIELD_DEPLOYS_PER_CHAIN_PER_DAY: z.coerce.number().int().min(1).default(100),
  /**
   * Wei of gas the day's deploys on one chain may reserve (each its gas bound at 2 × base fee + priority fee
   * when queued; the actual cost once done): 1 ETH by default, about 40 deploys of 2.55M gas at 10 gwei.
   */
  YIELD_DEPLOY_BUDGET_WEI_PER_CHAIN_PER_DAY: z
    .string()
    .regex(/^[1-9]\d{0,77}$/, 'must be a positive integer amount of wei')
    .default('1000000000000000000')
    .transform((wei) => BigInt(wei)),
  /**
   * Gas a deploy may use per vault of its set (a set of n vaults is signed with n × this as its gas limit):
   * the bound its reservation is priced on. One USDe vault takes about 2.55M.
   */
  YIELD_DEPLOY_GAS_PER_VAULT: z.coerce.number().int().min(500_000).max(30_000_000).default(3_000_000),
  /**
   * Blocks per `eth_getLogs` when the redeem-request route scans a deployment's vaults (providers cap a range at
   * about 5,000 blocks); a page scans at most ten such windows back (yield/redeemRequests.ts).
   */
  YIELD_REDEEM_SCAN_BLOCKS: z.coerce.number().int().min(1).max(100_000).default(5_000),
  /**
   * Redeem-request pages a merchant may read per minute, for the whole service (every api replica
   * together): each page reads up to ten log windows from the chain (security review III, finding 7).
   */
  YIELD_REDEEM_REQUESTS_PER_MERCHANT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(30),
  /**
   * The DNS server (`host:port`, or `host` for port 53) that custom-domain verification asks for TXT
   * records; the system's resolvers when unset. The dev stack and the tests point it at their local server.
   */
  YIELD_DNS_SERVER: z
    .string()
    .regex(/^[^\s:]+(:\d+)?$/, 'must be host or host:port')
    .optional(),
  /** How often a pending custom domain's TXT record is checked. */
  YIELD_DOMAIN_POLL_MS: z.coerce.number().int().min(100).default(60_000),
  /** How often a verified custom domain's TXT record is checked again (6 h). */
  YIELD_DOMAIN_RECHECK_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(6 * 3600_000),
  /** How long a verified domain's record may stay missing before its site stops and the hostname is freed (72 h). */
  YIELD_DOMAIN_LAPSE_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(72 * 3600_000),
  /** Pending (not yet verified) custom domains one merchant may have at once. */
  YIELD_DOMAINS_PENDING_PER_MERCHANT: z.coerce.number().int().min(1).max(1000).default(5),
  /** Slippage against stablecoin parity accepted when swapping deposits to USDe, in basis points. */
  SETTLEMENT_SLIPPAGE_BPS: z.coerce.number().int().min(0).max(1000).default(50),
  CHAIN_MONITOR_POLL_MS: z.coerce.number().int().min(100).default(2000),
  CHAIN_MONITOR_MAX_BLOCK_RANGE: z.coerce.number().int().min(1).max(100_000).default(2000),
  /** Most deposit addresses in one eth_getLogs `to` topic list; more are split over several requests. */
  CHAIN_MONITOR_ADDRESSES_PER_REQUEST: z.coerce.number().int().min(1).max(10_000).default(500),
  /** How long after expiry a session's deposit addresses are still watched, so late payments are recorded. */
  CHAIN_MONITOR_LATE_WATCH_SEC: lateWatchSeconds.default(7 * 24 * 3600),
  /**
   * The most watched payment options a deposit scan asks for by `to` topic; above it a scan reads every
   * Transfer of the supported tokens in its range and matches the recipients in Postgres (its cost then
   * follows the chain's stablecoin traffic, not the watched set). Measured: docs/decisions.md.
   */
  CHAIN_MONITOR_FILTERED_MAX_WATCHED: z.coerce.number().int().min(0).max(1_000_000).default(2_000),
  /**
   * How long one deposit-monitor or receipt-tracker activity keeps scanning, block by block as they become
   * safe, before it returns to its workflow (docs/decisions.md, "Monitor cycle"); 0: one range per
   * activity. Under the activities' 2-minute start-to-close timeout.
   */
  CHAIN_MONITOR_CYCLE_MS: z.coerce.number().int().min(0).max(90_000).default(30_000),
  ...lateWatchByChainVariables,
  /** Webhook targets on private, loopback and link-local addresses are refused unless this is set. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: booleanFlag.default(false),
  /**
   * 32-byte key, hex (64 characters) or base64, that encrypts webhook signing secrets at rest
   * (AES-256-GCM). Required in production; elsewhere a fixed development key is derived.
   */
  WEBHOOK_SECRET_ENCRYPTION_KEY: z
    .string()
    .refine(
      (text) => decodeEncryptionKey(text) !== undefined,
      'must be 32 bytes written as 64 hex characters or base64',
    )
    .optional(),
  /**
   * SMTP server that e-mail codes (login, e-mail verification) are sent through: `smtp://` or `smtps://`,
   * credentials in the URL. Unset: no codes are mailed and e-mail login answers 503.
   */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/\S+$/, 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** Sender of those e-mails; defaults to `StablePay <no-reply@<PUBLIC_BASE_URL host>>`. */
  MAIL_FROM: z.string().min(3).max(320).optional(),
  /**
   * 32-byte key, hex or base64, of the HMAC that e-mail codes are stored under (a six-digit code's plain
   * hash would fall to a brute force). Required in production when SMTP_URL is set; elsewhere a fixed
   * development key is derived.
   */
  EMAIL_CODE_HASH_KEY: z
    .string()
    .refine(
      (text) => decodeEncryptionKey(text) !== undefined,
      'must be 32 bytes written as 64 hex characters or base64',
    )
    .optional(),
  /** Codes mailed to one address per UTC hour (login and verification together): nobody can mail-bomb it. */
  EMAIL_CODES_PER_ADDRESS_PER_HOUR: z.coerce.number().int().min(1).max(1000).default(5),
  /** Codes requested from one client IP per UTC hour, whatever the addresses. */
  EMAIL_CODES_PER_IP_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(30),
  /**
   * Codes one client IP may request for one address per UTC hour; kept below the address allowance, so a
   * stranger's IP is stopped before the allowance the owner shares is spent.
   */
  EMAIL_CODES_PER_IP_PER_ADDRESS_PER_HOUR: z.coerce.number().int().min(1).max(1000).default(3),
  /**
   * The delegation manager whose calls the paymaster treats as delegated transfers (per-chain overrides
   * below); unset, the deployments file's, else MetaMask's published one (@metamask/delegation-deployments).
   */
  PAYMASTER_DELEGATION_MANAGER: evmAddress.optional(),
  /** Platform per-sender limits (a merchant may only tighten them): operations per UTC hour, USD per UTC day. */
  PAYMASTER_PLATFORM_PER_SENDER_HOURLY_OPS: z.coerce.number().int().min(1).max(1_000_000).default(500),
  PAYMASTER_PLATFORM_PER_SENDER_DAILY_USD: usdLimit.default('500'),
  /**
   * Platform-wide USD of sponsored gas per UTC day on mainnets, across all merchants; resets at 00:00 UTC.
   * Signing holds an operation's maximum cost until its validUntil; the receipt replaces it with the actual cost.
   */
  PAYMASTER_PLATFORM_DAILY_BUDGET_USD: usdLimit.default('100000'),
  /** The same budget for testnets, kept apart so testnet traffic never blocks mainnet sponsorship. */
  PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD: usdLimit.default('1000'),
  /** The share of each daily budget one merchant may hold or spend, in basis points (10000 = all of it). */
  PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: z.coerce.number().int().min(1).max(10_000).default(2000),
  /**
   * A sponsorship hold (limits and prepaid balance) ends when the receipt tracker reads a block whose time
   * is past the operation's validUntil (included: settled; not: dropped). Our own clock releases it only
   * this long after validUntil, in case the tracker stalls: a chain lagging our clock cannot spend a
   * released hold twice.
   */
  PAYMASTER_HOLD_RELEASE_GRACE_SEC: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600)
    .default(3600),
  /** Sponsored USD (markup included) per merchant per UTC day and network class; a merchant may only tighten it. */
  PAYMASTER_PLATFORM_PER_MERCHANT_DAILY_USD: usdLimit.default('10000'),
  /**
   * Fee bound of signed operations, in basis points of the chain's current fees: maxFeePerGas at most this
   * share of (2 × base fee + priority fee), maxPriorityFeePerGas at most this share of (base fee + priority fee).
   */
  PAYMASTER_FEE_BOUND_BPS: z.coerce.number().int().min(10_000).max(1_000_000).default(30_000),
  /** Most gas one signed operation may reserve: every gas limit plus preVerificationGas. */
  PAYMASTER_MAX_OPERATION_GAS: z.coerce.number().int().min(100_000).max(1_000_000_000).default(15_000_000),
  /** Markup on sponsored gas cost, in basis points (merchant per-transaction and per-sender USD caps count it). */
  PAYMASTER_MARKUP_BPS: z.coerce.number().int().min(0).max(10_000).default(DEFAULT_PAYMASTER_MARKUP_BPS),
  /** USD feeds of ERC-20 gas tokens per chain; a token without one is valued at 1 USD (its peg). */
  PAYMASTER_TOKEN_USD_FEEDS: tokenUsdFeeds.optional(),
  /** Margin on the ERC-20 gas rate a user pays, in basis points over ETH/USD ÷ token/USD (as the sponsored markup). */
  PAYMASTER_TOKEN_RATE_MARGIN_BPS: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(DEFAULT_PAYMASTER_MARKUP_BPS),
  /** The most one user-paid operation may cost its sender (USD), for a client that sets no cap of its own. */
  PAYMASTER_USER_PAID_MAX_OPERATION_USD: usdLimit.default('50'),
  /** An ETH/USD answer older than this (against the chain's latest block) is not a price. */
  PAYMASTER_PRICE_MAX_AGE_SEC: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(3900),
  /** The platform treasury prepaid top-ups settle to, on every chain without its own `_<chainId>` value. Required in production. */
  PLATFORM_TREASURY_ADDRESS: evmAddress.optional(),
  ...treasuryVariables,
  ...priceFeedVariables,
  ...delegationManagerVariables,
  ...rpcUrlVariables,
  ...bundlerUrlVariables,
});

export type Config = z.infer<typeof configSchema> & { PUBLIC_BASE_URL: string };

/** Names of every variable the configuration understands (the docker-compose test checks against it). */
export const CONFIG_VARIABLES = Object.keys(configSchema.shape);

/** One bad or missing setting: the variable and what is wrong with it. */
export interface ConfigIssue {
  variable: string;
  problem: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly issues: ConfigIssue[]) {
    super(
      `Invalid configuration:\n${issues.map(({ variable, problem }) => `  ${variable}: ${problem}`).join('\n')}`,
    );
  }
}

/** Parses the environment; throws a ConfigError that names each bad variable. Empty strings count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { config, issues } = parseEnvironment(env);
  if (issues.length) throw new ConfigError(issues);
  return config;
}

/**
 * Every issue of the environment at once, and the configuration as it would be without the bad
 * variables (so the checks that need a parsed configuration still run and report theirs too).
 */
function parseEnvironment(env: NodeJS.ProcessEnv): { config: Config; issues: ConfigIssue[] } {
  const present = Object.fromEntries(
    Object.entries(env).filter(([name, value]) => name in configSchema.shape && value !== ''),
  );
  const issues: ConfigIssue[] = [];
  let parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const variable = String(issue.path[0] ?? '(environment)');
      issues.push({ variable, problem: issue.message });
      delete present[variable];
    }
    // Every variable is optional or defaulted, so without the bad ones the rest parses.
    parsed = configSchema.safeParse(present);
    if (!parsed.success) throw new ConfigError(issues);
  }
  const config = parsed.data;
  if (config.NODE_ENV === 'production' && config.SIGNER_URL && !reachesSignerPrivately(config.SIGNER_URL)) {
    issues.push({
      variable: 'SIGNER_URL',
      problem:
        'the shared secret would cross a public network in plain HTTP: use https, or run the signer on a private network (a loopback or private address, or a single-label service name)',
    });
  }
  if (
    config.NODE_ENV === 'production' &&
    !config.PUBLIC_BASE_URL &&
    !issues.some(isAbout('PUBLIC_BASE_URL'))
  ) {
    issues.push({
      variable: 'PUBLIC_BASE_URL',
      problem:
        'is required in production: it is the base of every paymentUrl and the domain wallets sign in to',
    });
  }
  if (
    config.YIELD_DEPLOYER_PRIVATE_KEY &&
    config.YIELD_DEPLOYER_PRIVATE_KEY.toLowerCase() === config.OPERATOR_PRIVATE_KEY?.toLowerCase()
  ) {
    issues.push({
      variable: 'YIELD_DEPLOYER_PRIVATE_KEY',
      problem: 'must not be OPERATOR_PRIVATE_KEY: vault deploys are paid by an account apart from settlement',
    });
  }
  const executorKey = config.SUBSCRIPTION_EXECUTOR_PRIVATE_KEY?.toLowerCase();
  if (
    executorKey &&
    [config.OPERATOR_PRIVATE_KEY, config.YIELD_DEPLOYER_PRIVATE_KEY].some(
      (key) => key?.toLowerCase() === executorKey,
    )
  ) {
    issues.push({
      variable: 'SUBSCRIPTION_EXECUTOR_PRIVATE_KEY',
      problem:
        'must not be OPERATOR_PRIVATE_KEY or YIELD_DEPLOYER_PRIVATE_KEY: subscription charges are sent by an account of their own',
    });
  }
  if (config.NODE_ENV === 'production' && config.OPERATOR_PRIVATE_KEY && !config.YIELD_DEPLOYER_PRIVATE_KEY) {
    issues.push({
      variable: 'YIELD_DEPLOYER_PRIVATE_KEY',
      problem:
        'is required in production next to OPERATOR_PRIVATE_KEY: vault deploys never use the settlement key',
    });
  }
  if (config.TEMPORAL_TLS === false && temporalTlsRequested(config)) {
    issues.push({
      variable: 'TEMPORAL_TLS',
      problem: 'is false while TEMPORAL_TLS_* files or a server name are set: drop one or the other',
    });
  }
  if (Boolean(config.TEMPORAL_TLS_CERT_FILE) !== Boolean(config.TEMPORAL_TLS_KEY_FILE)) {
    issues.push({
      variable: config.TEMPORAL_TLS_CERT_FILE ? 'TEMPORAL_TLS_KEY_FILE' : 'TEMPORAL_TLS_CERT_FILE',
      problem: 'a client certificate needs its key and a key its certificate: set both or neither',
    });
  }
  return {
    config: { ...config, PUBLIC_BASE_URL: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}` },
    issues,
  };
}

const isAbout = (variable: string) => (issue: ConfigIssue) => issue.variable === variable;

/**
 * A check one process makes of its settings beyond the schema (a key it cannot run without, a key
 * production requires): it throws a ConfigError naming the variable, as the code that reads the setting does.
 */
export type SettingCheck = (config: Config) => unknown;

/** A check that `variable` is set: always, or only in production. */
export function settingRequired(variable: keyof Config, { inProduction = false } = {}): SettingCheck {
  return (config) => {
    if (inProduction && config.NODE_ENV !== 'production') return;
    if (config[variable] !== undefined) return;
    throw new ConfigError([
      { variable, problem: inProduction ? 'is required in production' : 'is required for this process' },
    ]);
  };
}

/**
 * The configuration of one process, with every issue of the environment and of the process's own
 * checks found in one pass: a ConfigError listing them all, or the configuration.
 */
export function loadProcessConfig(env: NodeJS.ProcessEnv, checks: SettingCheck[] = []): Config {
  const { config, issues } = parseEnvironment(env);
  for (const check of checks) {
    try {
      check(config);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      // A variable the schema already refused is not reported a second time as missing.
      issues.push(...error.issues.filter((issue) => !issues.some(isAbout(issue.variable))));
    }
  }
  if (issues.length) throw new ConfigError(issues);
  return config;
}

/** Whether any TEMPORAL_TLS_* detail is set (each of them turns TLS on). */
function temporalTlsRequested(config: z.infer<typeof configSchema>): boolean {
  return Boolean(
    config.TEMPORAL_TLS_CERT_FILE ||
    config.TEMPORAL_TLS_KEY_FILE ||
    config.TEMPORAL_TLS_CA_FILE ||
    config.TEMPORAL_TLS_SERVER_NAME,
  );
}

/** The TLS options of every Temporal connection (client and worker) from TEMPORAL_TLS*; undefined: plain. */
export interface TemporalTls {
  serverNameOverride?: string;
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
}

/**
 * Reads the TEMPORAL_TLS_* files into the SDK's TLS options (`Connection.connect({ tls })`,
 * `NativeConnection.connect({ tls })`); an unreadable file is a ConfigError naming its variable.
 */
export function temporalTlsOf(config: Config): TemporalTls | undefined {
  if (!config.TEMPORAL_TLS && !temporalTlsRequested(config)) return undefined;
  const read = (variable: 'TEMPORAL_TLS_CERT_FILE' | 'TEMPORAL_TLS_KEY_FILE' | 'TEMPORAL_TLS_CA_FILE') => {
    const path = config[variable];
    if (!path) return undefined;
    try {
      return readFileSync(path);
    } catch (error) {
      throw new ConfigError([{ variable, problem: `cannot be read: ${(error as Error).message}` }]);
    }
  };
  const crt = read('TEMPORAL_TLS_CERT_FILE');
  const key = read('TEMPORAL_TLS_KEY_FILE');
  const ca = read('TEMPORAL_TLS_CA_FILE');
  return {
    ...(config.TEMPORAL_TLS_SERVER_NAME && { serverNameOverride: config.TEMPORAL_TLS_SERVER_NAME }),
    ...(ca && { serverRootCACertificate: ca }),
    ...(crt && key && { clientCertPair: { crt, key } }),
  };
}

/**
 * Whether the API can send SIGNER_SHARED_SECRET to this URL without it crossing a public network in
 * clear text: TLS, or a plain-HTTP host on a private network — loopback, RFC 1918 / unique-local
 * addresses, or a single-label name (a service name on a private network, as in docker-compose).
 */
export function reachesSignerPrivately(signerUrl: string): boolean {
  const { protocol, hostname } = new URL(signerUrl);
  // A Unix-domain socket never leaves the host.
  if (protocol === 'https:' || protocol === 'unix:') return true;
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || (!host.includes('.') && !host.includes(':'))) return true;
  const ipv4 = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(host);
  if (ipv4) {
    const [a, b] = [Number(ipv4[1]), Number(ipv4[2])];
    return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
  }
  // IPv6: loopback and unique-local (fc00::/7).
  return host === '::1' || /^f[cd][0-9a-f]{0,2}:/.test(host);
}

/**
 * For process entrypoints: the configuration, or every problem with it printed in one message (no
 * stack trace) and exit status 1.
 */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env, checks: SettingCheck[] = []): Config {
  try {
    return loadProcessConfig(env, checks);
  } catch (error) {
    if (error instanceof ConfigError) exitWithConfigError(error);
    throw error;
  }
}

/** Prints a configuration problem found later in start-up the same way, and exits with status 1. */
export function exitWithConfigError(error: ConfigError): never {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

/** Throws a ConfigError naming `variable` when a process needs a value that is optional elsewhere. */
export function requireSetting<K extends keyof Config>(config: Config, variable: K): NonNullable<Config[K]> {
  const value = config[variable];
  if (value === undefined || value === null) {
    throw new ConfigError([{ variable: String(variable), problem: 'is required for this process' }]);
  }
  return value as NonNullable<Config[K]>;
}
