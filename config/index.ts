import { z } from 'zod';

/**
 * The one place that reads the environment. Every process (api, worker, signer, dev stack)
 * calls `loadConfig`; a bad or missing value names the variable and stops the process.
 */

/** Chain ids the service knows; each gets an optional `RPC_URL_<chainId>` variable. */
export const KNOWN_CHAIN_IDS = [1, 8453, 42161, 11155111, 84532, 421614] as const;

const port = z.coerce.number().int().min(1).max(65535);
const url = z.string().url();
const booleanFlag = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

const rpcUrlVariables = Object.fromEntries(
  KNOWN_CHAIN_IDS.map((chainId) => [`RPC_URL_${chainId}`, url.optional()]),
) as Record<`RPC_URL_${(typeof KNOWN_CHAIN_IDS)[number]}`, z.ZodOptional<typeof url>>;

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
  /** Deployment addresses per chain (the dev stack writes .dev/stack.json; production ships its own file). */
  DEPLOYMENTS_FILE: z.string().min(1).optional(),
  SIGNER_URL: url.optional(),
  SIGNER_SHARED_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  SIGNER_PORT: port.default(3100),
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
  JWT_TTL_SEC: z.coerce.number().int().min(60).max(30 * 24 * 3600).default(24 * 3600),
  /** Chain whose RPC verifies smart-contract-wallet login signatures when the payload names none. */
  LOGIN_DEFAULT_CHAIN_ID: z.coerce.number().int().positive().default(1),
  /** Webhook targets on private, loopback and link-local addresses are refused unless this is set. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: booleanFlag.default(false),
  ...rpcUrlVariables,
});

export type Config = z.infer<typeof configSchema> & { PUBLIC_BASE_URL: string };

/** Names of every variable the configuration understands (the docker-compose test checks against it). */
export const CONFIG_VARIABLES = Object.keys(configSchema.shape);

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly issues: { variable: string; problem: string }[]) {
    super(
      `Invalid configuration:\n${issues.map(({ variable, problem }) => `  ${variable}: ${problem}`).join('\n')}`,
    );
  }
}

/** Parses the environment; throws a ConfigError that names each bad variable. Empty strings count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([name, value]) => name in configSchema.shape && value !== ''),
  );
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => ({
        variable: String(issue.path[0] ?? '(environment)'),
        problem: issue.message,
      })),
    );
  }
  const config = parsed.data;
  return { ...config, PUBLIC_BASE_URL: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}` };
}

/** For process entrypoints: prints the problem and exits with status 1 instead of throwing. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Throws a ConfigError naming `variable` when a process needs a value that is optional elsewhere. */
export function requireSetting<K extends keyof Config>(config: Config, variable: K): NonNullable<Config[K]> {
  const value = config[variable];
  if (value === undefined || value === null) {
    throw new ConfigError([{ variable: String(variable), problem: 'is required for this process' }]);
  }
  return value as NonNullable<Config[K]>;
}
