import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestApp, type TestApp } from '../harness/app';
import { testStack } from '../harness/stack';
import { frameworkOn } from '../delegation/delegatorAccounts';

/**
 * `GET /v1/config` (issue 42): the subscription executor's address per chain where customers can
 * subscribe, with the contracts a periodic permission is built on; public, and empty without an executor.
 */

const stack = testStack();
const executor = privateKeyToAccount(generatePrivateKey()).address;

describe('GET /v1/config', () => {
  let app: TestApp;
  let bare: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ SUBSCRIPTION_EXECUTOR_ADDRESS: executor.toLowerCase() });
    bare = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
    await bare.close();
  });

  it('lists the executor on every local chain, without a credential, with the framework and tokens', async () => {
    const answer = await app.request('/v1/config');
    expect(answer.status).toBe(200);
    const listed = answer.body.subscriptionChains as { chainId: number }[];
    expect(listed.map((chain) => chain.chainId).sort()).toEqual(
      stack.chains.map((chain) => chain.chainId).sort(),
    );
    const local = stack.chains[0]!;
    const framework = frameworkOn(local);
    expect(listed.find((chain) => chain.chainId === local.chainId)).toMatchObject({
      subscriptionExecutor: executor,
      delegationManager: framework.delegationManager,
      erc20PeriodTransferEnforcer: framework.erc20PeriodTransferEnforcer,
      timestampEnforcer: framework.timestampEnforcer,
      tokens: expect.arrayContaining([
        { symbol: 'USDC', address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/), decimals: 6 },
      ]),
    });
  });

  it('lists no chain when the deployment has no subscription executor', async () => {
    const answer = await bare.request('/v1/config');
    expect(answer).toMatchObject({ status: 200, body: { subscriptionChains: [] } });
  });
});
