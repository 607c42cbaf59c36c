import type { Address } from 'viem';
import { startTestApp, type TestApp } from '../harness/app';
import type { SignedInMerchant } from '../harness/merchants';
import { creditPrepaidBalance } from '../../db/prepaidLedger';
import { MAINNET_CHAIN_ID, startMainnetStandIn } from './mainnetStandIn';
import { paymasterRpc } from './paymasterApi';
import {
  OP_CHARGED_USD_MICRO as CHARGED_USD_MICRO,
  OP_COST_USD_MICRO as COST_USD_MICRO,
  merchantSponsoringTarget,
  signedDataRequest,
  usd,
} from './signedDataRequests';

/**
 * Limits hold under concurrency: 200 simultaneous pm_getPaymasterData for one sender against a
 * limit that admits 10 → exactly 10 signed (real signer) and 190 refused, in the JSON-RPC answers
 * and in the usage rows. Each case runs on its own UTC day (injected clock) so the platform-wide
 * budget counter of one case never meets another's. Each request's maximum is 3.052512 USD of gas,
 * 3.357764 USD with markup (signedDataRequests.ts).
 */

const CHAIN_ID = 84532;
const REQUESTS = 200;

interface Setup {
  app: TestApp;
  merchant: SignedInMerchant;
  clientId: string;
}

async function setUp(env: Record<string, string>, day: string, chainId = CHAIN_ID): Promise<Setup> {
  const clock = new Date(`${day}T12:00:00.000Z`);
  const app = await startTestApp({ LOG_LEVEL: 'warn', ...env }, { now: () => clock });
  return { app, ...(await merchantSponsoringTarget(app, chainId)) };
}

async function fireSimultaneously({ app, clientId }: Setup, sender: Address, chainId = CHAIN_ID) {
  const responses = await Promise.all(
    Array.from({ length: REQUESTS }, (_, index) =>
      paymasterRpc(app, clientId, signedDataRequest({ id: index, sender, nonce: index, chainId })),
    ),
  );
  expect(responses.every((response) => response.status === 200)).toBe(true);
  const signed = responses.filter((response) => response.body.result !== undefined);
  const refused = responses.filter((response) => response.body.error !== undefined);
  return { signed, refused };
}

async function usageStatusCounts({ app, merchant }: Setup): Promise<Record<string, number>> {
  const rows = await app.db
    .selectFrom('paymaster_usage')
    .select(['status'])
    .where('merchant_id', '=', merchant.merchantId)
    .execute();
  const counts: Record<string, number> = {};
  for (const { status } of rows) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe('sponsorship limits under 200 simultaneous requests', () => {
  const opened: TestApp[] = [];
  afterAll(() => Promise.all(opened.map((app) => app.close())));

  it('per-sender hourly operation limit of 10: exactly 10 signed, 190 denied_rate_limit', async () => {
    const setup = await setUp({}, '2031-02-01');
    opened.push(setup.app);
    const patch = await setup.app.request('/v1/paymaster/limits', {
      method: 'PATCH',
      headers: setup.merchant.auth,
      json: { perSenderHourlyOps: 10 },
    });
    expect(patch.status).toBe(200);

    const { signed, refused } = await fireSimultaneously(setup, '0x5000000000000000000000000000000000000001');
    expect(signed).toHaveLength(10);
    expect(refused).toHaveLength(REQUESTS - 10);
    for (const response of refused) {
      expect(response.body.error).toEqual({
        code: -32600,
        message: expect.stringMatching(
          /^Policy denied: paymaster_rate_limit_exceeded: .* \(merchant-configured cap\)$/,
        ),
      });
    }
    expect(await usageStatusCounts(setup)).toEqual({ submitted: 10, denied_rate_limit: REQUESTS - 10 });
  });

  it('per-sender daily USD cap worth 10 operations: exactly 10 signed, 190 denied_spend_cap', async () => {
    const setup = await setUp({}, '2031-02-02');
    opened.push(setup.app);
    const patch = await setup.app.request('/v1/paymaster/limits', {
      method: 'PATCH',
      headers: setup.merchant.auth,
      json: { perSenderDailyUsd: usd(10n * CHARGED_USD_MICRO) },
    });
    expect(patch.status).toBe(200);

    const { signed, refused } = await fireSimultaneously(setup, '0x5000000000000000000000000000000000000002');
    expect(signed).toHaveLength(10);
    expect(refused).toHaveLength(REQUESTS - 10);
    for (const response of refused) {
      expect(response.body.error.message).toMatch(
        /^Policy denied: paymaster_spend_cap_exceeded: .* \(merchant-configured cap\)$/,
      );
    }
    expect(await usageStatusCounts(setup)).toEqual({ submitted: 10, denied_spend_cap: REQUESTS - 10 });
    // Every row carries the USD snapshot of the operation.
    const snapshots = await setup.app.db
      .selectFrom('paymaster_usage')
      .select(['eth_usd_price', 'estimated_gas_cost_wei', 'estimated_cost_usd'])
      .where('merchant_id', '=', setup.merchant.merchantId)
      .distinct()
      .execute();
    expect(snapshots).toEqual([
      {
        eth_usd_price: '3000.00000000',
        estimated_gas_cost_wei: '1017504000000000',
        estimated_cost_usd: usd(CHARGED_USD_MICRO),
      },
    ]);
  });

  it('platform daily budget worth 10 operations: exactly 10 signed, 190 denied_global_cap', async () => {
    // The budget counts gas cost without markup, across all merchants of the day.
    // 84532 is a testnet: its own budget, all of which one merchant may hold here.
    const setup = await setUp(
      {
        PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD: usd(10n * COST_USD_MICRO),
        PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: '10000',
      },
      '2031-02-03',
    );
    opened.push(setup.app);

    const { signed, refused } = await fireSimultaneously(setup, '0x5000000000000000000000000000000000000003');
    expect(signed).toHaveLength(10);
    expect(refused).toHaveLength(REQUESTS - 10);
    for (const response of refused) {
      expect(response.body.error).toEqual({
        code: -32600,
        message:
          'Policy denied: paymaster_global_cap_exceeded: the platform daily sponsorship budget for testnets is reached; it resets at 00:00 UTC, and what unsent operations hold frees up at their validUntil',
      });
    }
    expect(await usageStatusCounts(setup)).toEqual({ submitted: 10, denied_global_cap: REQUESTS - 10 });
  });

  it.each([
    ['per-client daily USD cap', 'perClientDailyUsd', '2031-02-04'],
    ['per-merchant daily USD cap', 'perMerchantDailyUsd', '2031-02-05'],
  ])('%s worth 10 operations: exactly 10 signed, 190 denied_spend_cap', async (_name, key, day) => {
    const setup = await setUp({}, day);
    opened.push(setup.app);
    const patch = await setup.app.request('/v1/paymaster/limits', {
      method: 'PATCH',
      headers: setup.merchant.auth,
      json: { [key]: usd(10n * CHARGED_USD_MICRO) },
    });
    expect(patch.status).toBe(200);

    const { signed, refused } = await fireSimultaneously(setup, '0x5000000000000000000000000000000000000004');
    expect(signed).toHaveLength(10);
    for (const response of refused) {
      expect(response.body.error.message).toMatch(
        /^Policy denied: paymaster_spend_cap_exceeded: .* \(merchant-configured cap\)$/,
      );
    }
    expect(await usageStatusCounts(setup)).toEqual({ submitted: 10, denied_spend_cap: REQUESTS - 10 });
  });

  it('prepaid balance worth 10 operations on a mainnet: exactly 10 reserved and signed, 190 denied_billing_balance', async () => {
    const mainnet = await startMainnetStandIn();
    try {
      const setup = await setUp(mainnet.appEnv, '2031-02-06', MAINNET_CHAIN_ID);
      opened.push(setup.app);
      await creditPrepaidBalance(setup.app.db, {
        merchantId: setup.merchant.merchantId,
        amountUsd: usd(10n * CHARGED_USD_MICRO + 1n),
        description: 'top-up',
      });

      const { signed, refused } = await fireSimultaneously(
        setup,
        '0x5000000000000000000000000000000000000005',
        MAINNET_CHAIN_ID,
      );
      expect(signed).toHaveLength(10);
      for (const response of refused) {
        expect(response.body.error.message).toMatch(/^Policy denied: paymaster_billing_balance_exhausted: /);
      }
      expect(await usageStatusCounts(setup)).toEqual({
        submitted: 10,
        denied_billing_balance: REQUESTS - 10,
      });
    } finally {
      await mainnet.stop();
    }
  });
});
