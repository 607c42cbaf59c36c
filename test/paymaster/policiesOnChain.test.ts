import { getAddress } from 'viem';
import { type TestApp, startTestApp } from '../harness/app';
import { testStack } from '../harness/stack';
import { answerJson, startApprovalReceiver, type ApprovalReceiver } from './approvalReceiver';
import { usageRows } from './paymasterApi';
import { newAccountOn } from './smartAccounts';
import {
  type SponsoringMerchant,
  sendAndWait,
  signInSponsoringMerchant,
  sponsorOperation,
  usdcCall,
} from './sponsoredOperations';

/**
 * Issue 43's acceptance: real SimpleAccount operations, estimated and sent through our bundler proxy
 * (Alto behind it) with stub and signed data from our paymaster RPC, against a policy with a window, an
 * operations budget per week and an approval receiver that refuses one sender. The refused operation is
 * never signed and spends nothing of the budget; the two approved ones are included; the third approved
 * one finds the week's budget spent.
 */

const stack = testStack();
const DAY_MS = 24 * 3600 * 1000;

describe('sponsorship policies with real operations', () => {
  let app: TestApp;
  let sponsoring: SponsoringMerchant;
  let receiver: ApprovalReceiver;
  beforeAll(async () => {
    receiver = await startApprovalReceiver();
    app = await startTestApp();
    sponsoring = await signInSponsoringMerchant(app);
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  it('a window, a weekly budget of 2 and a receiver that refuses one sender: 2 included, 1 refused by the receiver, 1 by the budget', async () => {
    const chain = stack.chains.find((candidate) => candidate.chainId === 84532) ?? stack.chains[0]!;
    const { merchant } = sponsoring;
    const clientRow = (await app.request('/v1/paymaster/clients', { headers: merchant.auth })).body.data.find(
      (client: { clientId: string }) => client.clientId === sponsoring.clientId,
    );
    const policiesPath = `/v1/paymaster/clients/${clientRow.id}/policies`;
    const [policy] = (await app.request(policiesPath, { headers: merchant.auth })).body.data;
    const patched = await app.request(`${policiesPath}/${policy.id}`, {
      method: 'PATCH',
      headers: merchant.auth,
      json: {
        startsAt: new Date(Date.now() - DAY_MS).toISOString(),
        endsAt: new Date(Date.now() + DAY_MS).toISOString(),
        budgets: [{ kind: 'operations', amount: '2', period: 'week', scope: 'policy' }],
        approvalWebhook: { url: receiver.url, timeoutMs: 5000 },
      },
    });
    expect(patched.status).toBe(200);

    const [first, refused, second, overBudget] = await Promise.all(
      [0, 1, 2, 3].map(() => newAccountOn(chain, '0.7')),
    );
    const refusedSender = getAddress(refused!.address);
    receiver.answerWith((request, response) => {
      const sender = getAddress(request.body.data.sender as string);
      answerJson(
        200,
        sender === refusedSender ? { sponsor: false, reason: 'not a customer' } : { sponsor: true },
      )(request, response);
    });
    const mint = (account: NonNullable<typeof first>) =>
      account.execute(chain.contracts.usdc!, 0n, usdcCall('mint', account.address, 1_000n));

    const included = async (account: NonNullable<typeof first>) => {
      const { operation } = await sponsorOperation(sponsoring, chain, account, mint(account));
      return sendAndWait(sponsoring, chain, account.version, operation);
    };
    expect((await included(first!)).success).toBe(true);
    await expect(sponsorOperation(sponsoring, chain, refused!, mint(refused!))).rejects.toThrow(
      /Policy denied: paymaster_blocked_by_merchant_rule: the approval webhook of policy \\"Default policy\\" refused the operation: not a customer/,
    );
    expect((await included(second!)).success).toBe(true);
    await expect(sponsorOperation(sponsoring, chain, overBudget!, mint(overBudget!))).rejects.toThrow(
      /Policy denied: paymaster_rate_limit_exceeded: policy \\"Default policy\\" reached its budget of 2 operations per week/,
    );

    const rows = await usageRows(app, merchant);
    const submitted = rows.filter((row) => row.status === 'submitted');
    expect(submitted.map((row) => getAddress(row.sender as string)).sort()).toEqual(
      [getAddress(first!.address), getAddress(second!.address)].sort(),
    );
    expect(submitted.every((row) => row.policyId === policy.id)).toBe(true);
    expect(rows.filter((row) => row.status !== 'submitted').map((row) => row.reason)).toEqual(
      expect.arrayContaining(['approval_refused', 'policy_budget_operations']),
    );
    // The receiver was asked for the three operations that reached signing with room in the budget.
    const askedFor = receiver.received.map((request) => getAddress(request.body.data.sender as string));
    expect(askedFor).toEqual(
      expect.arrayContaining([getAddress(first!.address), refusedSender, getAddress(second!.address)]),
    );
    expect(askedFor).not.toContain(getAddress(overBudget!.address));
  });
});
