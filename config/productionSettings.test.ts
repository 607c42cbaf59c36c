import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { API_SETTING_CHECKS } from '../api/settingChecks';
import { createMerchantTokenService } from '../api/auth/merchantTokens';
import { SIGNER_SETTING_CHECKS } from '../signer/settingChecks';
import { WORKER_SETTING_CHECKS } from '../workers/settingChecks';
import { CONFIG_VARIABLES, ConfigError, loadProcessConfig } from '.';

/**
 * Production configuration as an operator meets it: every missing or bad setting of a process reported
 * at once, in one message without a stack trace, and `npm run keys` making every secret it needs.
 */

const root = resolve(__dirname, '..');
const run = promisify(execFile);

/** Starts a process entrypoint with exactly `env` (plus PATH) and returns how it ended. */
async function start(entrypoint: string, env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', entrypoint], {
      cwd: root,
      env: { PATH: process.env.PATH, ...env },
      // The entrypoint imports its whole process before it reads the settings: slow on a loaded machine.
      timeout: 90_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The variables an "Invalid configuration" message names, in order. */
function namedVariables(message: string): string[] {
  return [...message.matchAll(/^ {2}([A-Z][A-Z0-9_]*): /gm)].map((match) => match[1]!);
}

describe('a production process with missing and bad settings', () => {
  it.each([
    [
      'api/main.ts',
      [
        'PORT',
        'PUBLIC_BASE_URL',
        'SIGNER_URL',
        'DATABASE_URL',
        'JWT_PRIVATE_JWK',
        'WEBHOOK_SECRET_ENCRYPTION_KEY',
        'EMAIL_CODE_HASH_KEY',
        'PLATFORM_TREASURY_ADDRESS',
      ],
    ],
    [
      'workers/main.ts',
      ['PORT', 'PUBLIC_BASE_URL', 'SIGNER_URL', 'DATABASE_URL', 'WEBHOOK_SECRET_ENCRYPTION_KEY'],
    ],
    [
      'signer/main.ts',
      ['PORT', 'PUBLIC_BASE_URL', 'SIGNER_URL', 'SIGNER_PRIVATE_KEY', 'SIGNER_SHARED_SECRET'],
    ],
  ])(
    '%s names every one of them in one message, with no stack trace, and exits 1',
    async (entrypoint, expected) => {
      const ended = await start(entrypoint, {
        NODE_ENV: 'production',
        PORT: 'eighty',
        SIGNER_URL: 'http://signer.example.com:3100',
        SMTP_URL: 'smtp://mail.example.com:587',
      });
      expect(ended.code).toBe(1);
      expect(ended.stderr.startsWith('Invalid configuration:\n')).toBe(true);
      expect(namedVariables(ended.stderr).sort()).toEqual([...expected].sort());
      expect(ended.stderr).not.toMatch(/^\s+at /m);
      expect(ended.stderr.trim().split('\n')).toHaveLength(expected.length + 1);
    },
    120_000,
  );

  it('a setting the schema refuses is named once, not again as missing', () => {
    try {
      loadProcessConfig(
        { NODE_ENV: 'production', JWT_PRIVATE_JWK: '', DATABASE_URL: 'mysql://x' },
        API_SETTING_CHECKS,
      );
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const variables = (error as ConfigError).issues.map((issue) => issue.variable);
      expect(variables.filter((variable) => variable === 'DATABASE_URL')).toHaveLength(1);
      expect(variables).toContain('JWT_PRIVATE_JWK');
    }
  });

  it("the README's NODE_ENV row names exactly the settings production requires of the api and the worker", () => {
    const row = readFileSync(resolve(root, 'README.md'), 'utf8')
      .split('\n')
      .find((line) => line.startsWith('| `NODE_ENV`'))!;
    const documented = [...row.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1]!);
    const base = { SMTP_URL: 'smtp://mail.example.com:587', DATABASE_URL: 'postgres://db/stablepay' };
    const requiredIn = (env: Record<string, string>) => {
      const variables = new Set<string>();
      for (const checks of [API_SETTING_CHECKS, WORKER_SETTING_CHECKS]) {
        try {
          loadProcessConfig(env, checks);
        } catch (error) {
          for (const issue of (error as ConfigError).issues) variables.add(issue.variable);
        }
      }
      return variables;
    };
    const production = requiredIn({ ...base, NODE_ENV: 'production' });
    expect(requiredIn({ ...base, NODE_ENV: 'development' })).toEqual(new Set());
    expect(new Set(documented.filter((name) => name !== 'NODE_ENV' && name !== 'SMTP_URL'))).toEqual(
      production,
    );
  });
});

describe('npm run keys', () => {
  async function keys(): Promise<Record<string, string>> {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'config/keysCommand.ts'], {
      cwd: root,
    });
    expect(stderr).toBe('');
    const lines = stdout.trim().split('\n');
    // .env form: a comment line above each VARIABLE=value line, nothing else.
    lines.forEach((line, index) => expect(line).toMatch(index % 2 === 0 ? /^# \S/ : /^[A-Z][A-Z0-9_]*=\S+$/));
    return Object.fromEntries(
      lines
        .filter((line) => !line.startsWith('#'))
        .map((line) => {
          const [, variable, value] = /^([A-Z0-9_]+)=(.*)$/.exec(line)!;
          return [variable!, value!.replace(/^'(.*)'$/, '$1')];
        }),
    );
  }

  it('prints fresh values for every secret setting, which production accepts for every process', async () => {
    const first = await keys();
    const second = await keys();
    expect(Object.keys(first).sort()).toEqual(
      [
        'JWT_PRIVATE_JWK',
        'WEBHOOK_SECRET_ENCRYPTION_KEY',
        'EMAIL_CODE_HASH_KEY',
        'SIGNER_SHARED_SECRET',
        'METRICS_TOKEN',
        'POSTGRES_PASSWORD',
        'SIGNER_PRIVATE_KEY',
        'OPERATOR_PRIVATE_KEY',
        'YIELD_DEPLOYER_PRIVATE_KEY',
        'SUBSCRIPTION_EXECUTOR_PRIVATE_KEY',
        'DEPLOYER_PRIVATE_KEY',
      ].sort(),
    );
    for (const variable of Object.keys(first)) expect(second[variable]).not.toBe(first[variable]);
    // Every one the services read is a setting of config/index.ts (the deployer's and Postgres's are not).
    for (const variable of Object.keys(first).filter(
      (name) => !['DEPLOYER_PRIVATE_KEY', 'POSTGRES_PASSWORD'].includes(name),
    ))
      expect(CONFIG_VARIABLES).toContain(variable);

    const env = {
      ...first,
      NODE_ENV: 'production',
      PUBLIC_BASE_URL: 'https://pay.example.com',
      DATABASE_URL: 'postgres://stablepay@db/stablepay',
      SMTP_URL: 'smtp://mail.example.com:587',
      PLATFORM_TREASURY_ADDRESS: privateKeyToAccount(first.DEPLOYER_PRIVATE_KEY as Hex).address,
    };
    for (const checks of [API_SETTING_CHECKS, WORKER_SETTING_CHECKS, SIGNER_SETTING_CHECKS])
      expect(() => loadProcessConfig(env, checks)).not.toThrow();

    // The JWK signs merchant tokens that verify.
    const tokens = await createMerchantTokenService(loadProcessConfig(env, API_SETTING_CHECKS));
    const merchant = {
      id: '3f1c2a4e-8b7d-4c6e-9a5f-1b2c3d4e5f60',
      walletAddress: env.PLATFORM_TREASURY_ADDRESS,
    };
    expect(await tokens.verify((await tokens.issue(merchant)).token)).toBe(merchant.id);
  });

  it('names the address each private key controls in the comment above it', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'config/keysCommand.ts'], {
      cwd: root,
    });
    const lines = stdout.trim().split('\n');
    for (const variable of [
      'SIGNER_PRIVATE_KEY',
      'OPERATOR_PRIVATE_KEY',
      'YIELD_DEPLOYER_PRIVATE_KEY',
      'SUBSCRIPTION_EXECUTOR_PRIVATE_KEY',
      'DEPLOYER_PRIVATE_KEY',
    ]) {
      const index = lines.findIndex((line) => line.startsWith(`${variable}=`));
      const address = privateKeyToAccount(lines[index]!.slice(variable.length + 1) as Hex).address;
      expect(lines[index - 1]).toContain(address);
    }
  });
});
