import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '.';

describe('configuration', () => {
  it('applies defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(3000);
    expect(config.PUBLIC_BASE_URL).toBe('http://localhost:3000');
    expect(config.TEMPORAL_ADDRESS).toBe('localhost:7233');
    expect(config.BODY_LIMIT_BYTES).toBe(1024 * 1024);
    expect(config.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
  });

  it('coerces and keeps valid values', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u:p@db:5432/app',
      RPC_URL_8453: 'https://base.example/rpc',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    expect(config.PORT).toBe(8080);
    expect(config.RPC_URL_8453).toBe('https://base.example/rpc');
    expect(config.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(true);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['TEMPORAL_ADDRESS', 'no-port'],
    ['RPC_URL_1', 'not a url'],
    ['PUBLIC_BASE_URL', '/relative'],
    ['SIGNER_SHARED_SECRET', 'short'],
    ['LOG_LEVEL', 'loud'],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'yes please'],
  ])('a bad %s (%s) is refused with a message naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(
      new RegExp(`^Invalid configuration:\\n  ${variable}: `),
    );
  });

  it('names every bad variable at once', () => {
    try {
      loadConfig({ PORT: 'x', TEMPORAL_ADDRESS: 'y' });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues.map((issue) => issue.variable).sort()).toEqual([
        'PORT',
        'TEMPORAL_ADDRESS',
      ]);
    }
  });
});

describe("issue 13 finding 7: the signer's shared secret travels over plain HTTP", () => {
  it.each(['http://signer.example.com:3100', 'http://203.0.113.7:3100', 'http://[2001:db8::7]:3100'])(
    'in production, SIGNER_URL %s (plain HTTP to a public host) is refused',
    (url) => {
      expect(() =>
        loadConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://pay.example.com', SIGNER_URL: url }),
      ).toThrow(
        /^Invalid configuration:\n {2}SIGNER_URL: the shared secret would cross a public network in plain HTTP/,
      );
    },
  );

  it.each([
    'https://signer.example.com',
    'http://signer:3100',
    'http://127.0.0.1:3100',
    'http://localhost:3100',
    'http://10.1.2.3:3100',
    'http://172.20.0.5:3100',
    'http://192.168.7.2:3100',
    'http://[fd00::5]:3100',
  ])('in production, SIGNER_URL %s (TLS, or a private network) is accepted', (url) => {
    expect(
      loadConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://pay.example.com', SIGNER_URL: url })
        .SIGNER_URL,
    ).toBe(url);
  });
});

describe('process start-up with a bad configuration', () => {
  it('the api process stops with status 1 and a message naming the variable', () => {
    const result = spawnSync(process.execPath, [require.resolve('tsx/cli'), 'api/main.ts'], {
      cwd: `${__dirname}/..`,
      env: { PATH: process.env.PATH, PORT: 'not-a-port', DATABASE_URL: 'postgres://x@127.0.0.1:1/x' },
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid configuration:');
    expect(result.stderr).toMatch(/PORT: /);
  }, 120_000);
});

describe('production settings', () => {
  it('PUBLIC_BASE_URL is required in production (paymentUrl and the login domain come from it)', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      /PUBLIC_BASE_URL: is required in production/,
    );
    expect(
      loadConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://pay.example.com' }).PUBLIC_BASE_URL,
    ).toBe('https://pay.example.com');
    expect(loadConfig({ NODE_ENV: 'development' }).PUBLIC_BASE_URL).toBe('http://localhost:3000');
  });
});

describe('the README configuration table', () => {
  it('documents every variable the config module reads', () => {
    const readme = readFileSync(`${__dirname}/../README.md`, 'utf8');
    const documented = new Set(
      [...readme.matchAll(/`([A-Z][A-Z0-9_]+(?:_<chainId>)?)`/g)].map((match) => match[1]),
    );
    const missing = CONFIG_VARIABLES.map((name) => name.replace(/_\d+$/, '_<chainId>')).filter(
      (name) => !documented.has(name) && !documented.has(name.replace(/_<chainId>$/, '')),
    );
    expect([...new Set(missing)]).toEqual([]);
  });
});

describe('issue 26 finding 6: vault deploys are paid by an account apart from settlement', () => {
  const operator = `0x${'11'.repeat(32)}`;
  const yieldDeployer = `0x${'22'.repeat(32)}`;
  const production = { NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://pay.example.com' };

  it('finding 6 — the yield deployer key may not be the settlement operator key, in any environment', () => {
    for (const NODE_ENV of ['development', 'test', 'production']) {
      expect(() =>
        loadConfig({
          ...production,
          NODE_ENV,
          OPERATOR_PRIVATE_KEY: operator,
          YIELD_DEPLOYER_PRIVATE_KEY: operator.toUpperCase().replace('0X', '0x'),
        }),
      ).toThrow(/YIELD_DEPLOYER_PRIVATE_KEY: must not be OPERATOR_PRIVATE_KEY/);
    }
  });

  it('finding 6 — in production a worker with the settlement key needs its own yield deployer key; no fallback to the operator', () => {
    expect(() => loadConfig({ ...production, OPERATOR_PRIVATE_KEY: operator })).toThrow(
      /YIELD_DEPLOYER_PRIVATE_KEY: is required in production/,
    );
    const config = loadConfig({
      ...production,
      OPERATOR_PRIVATE_KEY: operator,
      YIELD_DEPLOYER_PRIVATE_KEY: yieldDeployer,
    });
    expect(config.YIELD_DEPLOYER_PRIVATE_KEY).toBe(yieldDeployer);
    // Outside production an unset key means no yield deploys on that worker, never the operator's key.
    expect(loadConfig({ OPERATOR_PRIVATE_KEY: operator }).YIELD_DEPLOYER_PRIVATE_KEY).toBeUndefined();
  });

  it('finding 6 — the daily deploy cap and the redeploy back-off are configurable, with defaults', () => {
    expect(loadConfig({})).toMatchObject({
      YIELD_DEPLOYS_PER_MERCHANT_PER_DAY: 10,
      YIELD_REDEPLOY_BACKOFF_SEC: 900,
    });
    expect(
      loadConfig({ YIELD_DEPLOYS_PER_MERCHANT_PER_DAY: '3', YIELD_REDEPLOY_BACKOFF_SEC: '0' }),
    ).toMatchObject({ YIELD_DEPLOYS_PER_MERCHANT_PER_DAY: 3, YIELD_REDEPLOY_BACKOFF_SEC: 0 });
    expect(() => loadConfig({ YIELD_DEPLOYS_PER_MERCHANT_PER_DAY: '0' })).toThrow(
      /YIELD_DEPLOYS_PER_MERCHANT_PER_DAY/,
    );
    expect(loadConfig({}).YIELD_REDEEM_SCAN_BLOCKS).toBe(5_000);
    expect(loadConfig({ YIELD_REDEEM_SCAN_BLOCKS: '100' }).YIELD_REDEEM_SCAN_BLOCKS).toBe(100);
    expect(() => loadConfig({ YIELD_REDEEM_SCAN_BLOCKS: '0' })).toThrow(/YIELD_REDEEM_SCAN_BLOCKS/);
  });

  it('security review III, finding 2 — the platform-wide deploy budget (count and wei, a bigint) and the gas per vault are configurable, with defaults', () => {
    expect(loadConfig({})).toMatchObject({
      YIELD_DEPLOYS_PER_CHAIN_PER_DAY: 100,
      YIELD_DEPLOY_BUDGET_WEI_PER_CHAIN_PER_DAY: 10n ** 18n,
      YIELD_DEPLOY_GAS_PER_VAULT: 3_000_000,
    });
    expect(
      loadConfig({
        YIELD_DEPLOYS_PER_CHAIN_PER_DAY: '5',
        YIELD_DEPLOY_BUDGET_WEI_PER_CHAIN_PER_DAY: '123456789012345678901234567890',
        YIELD_DEPLOY_GAS_PER_VAULT: '2600000',
      }),
    ).toMatchObject({
      YIELD_DEPLOYS_PER_CHAIN_PER_DAY: 5,
      YIELD_DEPLOY_BUDGET_WEI_PER_CHAIN_PER_DAY: 123456789012345678901234567890n,
      YIELD_DEPLOY_GAS_PER_VAULT: 2_600_000,
    });
    for (const wei of ['0', '1.5', '1e18', '-1', ' 1'])
      expect(() => loadConfig({ YIELD_DEPLOY_BUDGET_WEI_PER_CHAIN_PER_DAY: wei })).toThrow(
        /YIELD_DEPLOY_BUDGET_WEI_PER_CHAIN_PER_DAY/,
      );
    expect(() => loadConfig({ YIELD_DEPLOYS_PER_CHAIN_PER_DAY: '0' })).toThrow(
      /YIELD_DEPLOYS_PER_CHAIN_PER_DAY/,
    );
    expect(() => loadConfig({ YIELD_DEPLOY_GAS_PER_VAULT: '1000' })).toThrow(/YIELD_DEPLOY_GAS_PER_VAULT/);
  });
});

describe('issue 42: the subscription executor has its own key', () => {
  const operator = `0x${'11'.repeat(32)}`;
  const yieldDeployer = `0x${'22'.repeat(32)}`;
  const executor = `0x${'33'.repeat(32)}`;

  it('refuses the settlement operator or the yield deployer key as the executor key, in any environment', () => {
    for (const NODE_ENV of ['development', 'test']) {
      expect(() =>
        loadConfig({ NODE_ENV, OPERATOR_PRIVATE_KEY: operator, SUBSCRIPTION_EXECUTOR_PRIVATE_KEY: operator }),
      ).toThrow(
        /SUBSCRIPTION_EXECUTOR_PRIVATE_KEY: must not be OPERATOR_PRIVATE_KEY or YIELD_DEPLOYER_PRIVATE_KEY/,
      );
      expect(() =>
        loadConfig({
          NODE_ENV,
          YIELD_DEPLOYER_PRIVATE_KEY: yieldDeployer,
          SUBSCRIPTION_EXECUTOR_PRIVATE_KEY: yieldDeployer.toUpperCase().replace('0X', '0x'),
        }),
      ).toThrow(/SUBSCRIPTION_EXECUTOR_PRIVATE_KEY: must not be/);
    }
  });

  it('takes a key of its own and the public address for the api; a malformed address is refused', () => {
    const config = loadConfig({
      OPERATOR_PRIVATE_KEY: operator,
      SUBSCRIPTION_EXECUTOR_PRIVATE_KEY: executor,
      SUBSCRIPTION_EXECUTOR_ADDRESS: '0x00000000000000000000000000000000000000E1',
    });
    expect(config.SUBSCRIPTION_EXECUTOR_PRIVATE_KEY).toBe(executor);
    expect(config.SUBSCRIPTION_EXECUTOR_ADDRESS).toBe('0x00000000000000000000000000000000000000E1');
    expect(() => loadConfig({ SUBSCRIPTION_EXECUTOR_ADDRESS: '0x1234' })).toThrow(
      /SUBSCRIPTION_EXECUTOR_ADDRESS: must be a 0x address/,
    );
  });
});
