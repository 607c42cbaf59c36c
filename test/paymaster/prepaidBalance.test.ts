import { sql } from 'kysely';
import type { Address } from 'viem';
import { createPrepaidBalanceActivities } from '../../activities/prepaidBalances';
import { creditPrepaidBalance, debitPrepaidBalance, findPrepaidBalanceDrift } from '../../db/prepaidLedger';
import { type TestApp, startTestApp } from '../harness/app';
import { localContractsAs, writeDeploymentsFile } from '../harness/deployments';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { allowContract, createPaymasterClient, paymasterRpc } from './paymasterApi';
import { TARGET, signedDataRequest } from './signedDataRequests';

/**
 * Issue 12, finding 7: the prepaid balance was a SUM over the merchant's whole ledger, computed on every
 * sponsored call. It is now a running balance kept in the same transaction as each ledger entry; the
 * ledger stays the source of truth, and a check recomputes every balance from it.
 */

let app: TestApp;
beforeAll(async () => {
  // Base mainnet carries a copy of the local contracts, so the mainnet balance gate can be exercised.
  app = await startTestApp({
    DEPLOYMENTS_FILE: writeDeploymentsFile([...testStack().chains, ...localContractsAs([8453])]),
  });
});
afterAll(() => app.close());

const runningBalance = async (merchantId: string) =>
  (
    await app.db
      .selectFrom('prepaid_balances')
      .select('balance_usd')
      .where('merchant_id', '=', merchantId)
      .executeTakeFirst()
  )?.balance_usd;

const balanceRoute = async (merchant: SignedInMerchant) =>
  (await app.request('/v1/merchants/me/balance', { headers: merchant.auth })).body.prepaidBalanceUsd;

const stubOnBase = (sender: Address) =>
  signedDataRequest({ method: 'pm_getPaymasterStubData', sender, chainId: 8453 });

describe('issue 12 finding 7: the balance is a SUM over the whole ledger on every sponsored call', () => {
  it('keeps a running balance in the same transaction as each entry: equal to the ledger under concurrent writes, untouched by a rollback', async () => {
    const merchant = await signInNewMerchant(app);
    const writes = Array.from({ length: 40 }, (_, index) =>
      index % 4 === 3
        ? debitPrepaidBalance(app.db, {
            merchantId: merchant.merchantId,
            amountUsd: `0.${String(index).padStart(6, '0')}`,
            description: 'concurrent debit',
          })
        : creditPrepaidBalance(app.db, {
            merchantId: merchant.merchantId,
            amountUsd: `${index + 1}.000001`,
            description: 'concurrent credit',
          }),
    );
    await Promise.all(writes);
    const ledger = await sql<{ sum: string }>`
      SELECT coalesce(sum(CASE direction WHEN 'credit' THEN amount_usd ELSE -amount_usd END), 0)::numeric(20, 6) AS sum
      FROM prepaid_ledger_entries WHERE merchant_id = ${merchant.merchantId}`.execute(app.db);
    expect(await runningBalance(merchant.merchantId)).toBe(ledger.rows[0]!.sum);
    expect(await balanceRoute(merchant)).toBe(ledger.rows[0]!.sum);

    // An entry whose transaction rolls back moves neither the ledger nor the running balance.
    await expect(
      app.db.transaction().execute(async (trx) => {
        await creditPrepaidBalance(trx, {
          merchantId: merchant.merchantId,
          amountUsd: '1000',
          description: 'rolled back',
        });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await runningBalance(merchant.merchantId)).toBe(ledger.rows[0]!.sum);
    expect(await findPrepaidBalanceDrift(app.db, { merchantIds: [merchant.merchantId] })).toEqual([]);
  });

  it('ledger entries are append-only: changing an amount is refused', async () => {
    const merchant = await signInNewMerchant(app);
    const entry = await creditPrepaidBalance(app.db, {
      merchantId: merchant.merchantId,
      amountUsd: '3',
      description: 'top-up',
    });
    await expect(
      app.db
        .updateTable('prepaid_ledger_entries')
        .set({ amount_usd: '300' })
        .where('id', '=', entry.id)
        .execute(),
    ).rejects.toThrow(/append-only/);
    expect(await runningBalance(merchant.merchantId)).toBe('3.000000');
  });

  it('the sponsorship gate reads the running balance, and the check recomputes it from the ledger and names any drift', async () => {
    const merchant = await signInNewMerchant(app);
    const { clientId } = await createPaymasterClient(app, merchant, {
      environment: 'live',
      allowedChainIds: [8453],
    });
    await allowContract(app, merchant, 8453, TARGET);
    const sender: Address = '0x5000000000000000000000000000000000000071';
    await creditPrepaidBalance(app.db, {
      merchantId: merchant.merchantId,
      amountUsd: '5',
      description: 'top-up',
    });
    expect((await paymasterRpc(app, clientId, stubOnBase(sender))).body.result).toBeDefined();

    // Knock the running balance off the ledger: the gate follows the running balance (no ledger scan)...
    await app.db
      .updateTable('prepaid_balances')
      .set({ balance_usd: '0' })
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
    try {
      expect((await paymasterRpc(app, clientId, stubOnBase(sender))).body.error.message).toMatch(
        /^Policy denied: paymaster_billing_balance_exhausted/,
      );
      // ...and the check, recomputing from the ledger, names the merchant and both figures.
      expect(await findPrepaidBalanceDrift(app.db, { merchantIds: [merchant.merchantId] })).toEqual([
        { merchantId: merchant.merchantId, runningUsd: '0.000000', ledgerUsd: '5.000000' },
      ]);
      const check = createPrepaidBalanceActivities({ db: app.db });
      await expect(check.checkPrepaidBalances({ merchantIds: [merchant.merchantId] })).resolves.toEqual({
        drifted: [{ merchantId: merchant.merchantId, runningUsd: '0.000000', ledgerUsd: '5.000000' }],
      });
    } finally {
      await app.db
        .updateTable('prepaid_balances')
        .set({ balance_usd: '5' })
        .where('merchant_id', '=', merchant.merchantId)
        .execute();
    }
    expect(await findPrepaidBalanceDrift(app.db, { merchantIds: [merchant.merchantId] })).toEqual([]);
  });
});
