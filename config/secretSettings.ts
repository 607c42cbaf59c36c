import { randomBytes } from 'node:crypto';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { generateSigningJwk } from './signingJwk';

/** One secret setting with a freshly generated value, and what the operator must know of it. */
export interface SecretSetting {
  variable: string;
  value: string;
  /** Printed above it: who reads it and what to do with it. */
  note: string;
}

const key32 = () => randomBytes(32).toString('hex');

function privateKeySetting(variable: string, note: (address: string) => string): SecretSetting {
  const value = generatePrivateKey();
  return { variable, value, note: note(privateKeyToAccount(value).address) };
}

/**
 * Fresh values for every secret the services read (README "Configuration", docs/deployment.md §1):
 * the JWT signing key, the 32-byte encryption and hash keys, the signer's shared secret, the metrics
 * token, docker-compose's database password, and the five private keys with the address each one controls.
 */
export async function generateSecretSettings(): Promise<SecretSetting[]> {
  return [
    {
      variable: 'JWT_PRIVATE_JWK',
      value: JSON.stringify(await generateSigningJwk()),
      note: 'api: signs merchant session tokens (ES256 private JWK)',
    },
    {
      variable: 'WEBHOOK_SECRET_ENCRYPTION_KEY',
      value: key32(),
      note: 'api and worker: encrypts webhook signing secrets at rest (the same value for both)',
    },
    {
      variable: 'EMAIL_CODE_HASH_KEY',
      value: key32(),
      note: 'api: HMAC key of stored e-mail codes (required with SMTP_URL)',
    },
    {
      variable: 'SIGNER_SHARED_SECRET',
      value: key32(),
      note: 'api and signer: bearer secret between them (the same value for both)',
    },
    { variable: 'METRICS_TOKEN', value: key32(), note: 'api: bearer token /metrics requires' },
    {
      variable: 'POSTGRES_PASSWORD',
      value: key32(),
      note: 'docker-compose.yml: the database password (its DATABASE_URL is built from it)',
    },
    privateKeySetting(
      'SIGNER_PRIVATE_KEY',
      (address) =>
        `signer only: the paymaster signing key; verifying signer ${address} (deploy the paymasters with it)`,
    ),
    privateKeySetting(
      'OPERATOR_PRIVATE_KEY',
      (address) => `worker only: the settlement operator ${address}; fund it with ETH for gas on every chain`,
    ),
    privateKeySetting(
      'YIELD_DEPLOYER_PRIVATE_KEY',
      (address) =>
        `worker only: deploys merchants' yield vaults as ${address}; fund it with ETH for gas on every chain`,
    ),
    privateKeySetting(
      'SUBSCRIPTION_EXECUTOR_PRIVATE_KEY',
      (address) =>
        `worker only: charges subscriptions as ${address} (the api's SUBSCRIPTION_EXECUTOR_ADDRESS); fund it with ETH for gas on every chain`,
    ),
    privateKeySetting(
      'DEPLOYER_PRIVATE_KEY',
      (address) =>
        `chain/deployment only, then offline: deployer ${address} decides every deposit address; keep it`,
    ),
  ];
}

/** `.env` text: a comment line and `VARIABLE=value` per setting (JSON values single-quoted). */
export function toDotenv(settings: SecretSetting[]): string {
  return settings
    .map(({ variable, value, note }) => {
      const written = /^[\w.:+/=-]+$/.test(value) ? value : `'${value}'`;
      return `# ${note}\n${variable}=${written}\n`;
    })
    .join('');
}
