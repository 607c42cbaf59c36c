import {
  type Address,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  http,
  numberToHex,
  parseEther,
  publicActions,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ROOT_AUTHORITY, delegationManagerAbi, type Delegation } from '../../chain/delegations';
import type { OperatorClient } from '../../chain/operatorChains';
import { encodePeriodicChargeRedemption, periodTransferCaveat } from '../../chain/periodicTransfers';
import { chargePeriod, type PeriodChargeRequest } from '../../subscriptions/periodCharge';
import { testStack } from '../harness/stack';
import { publicClientFor, rpc } from '../paymaster/smartAccounts';
import {
  deployFundedDeleGator,
  executeAsDeleGator,
  frameworkOn,
  signDelegation,
  usdcBalance,
} from '../delegation/delegatorAccounts';

/**
 * One period's charge on the real ERC20PeriodTransferEnforcer (issue 42, money safety): it moves exactly
 * the amount once; asked again after the redemption but before its record (a retried activity after a
 * crash) it finds the transfer and sends nothing; a balance below the amount and a revoked permission
 * charge nothing.
 */

const stack = testStack();
const chain = stack.chains.find((candidate) => candidate.chainId === 84532)!;
const framework = frameworkOn(chain);
const client = publicClientFor(chain.rpcUrl);
const TOKENS = 1_000_000n;
const AMOUNT = 10n * TOKENS;

async function executorClient(): Promise<OperatorClient> {
  const account = privateKeyToAccount(generatePrivateKey());
  await rpc(chain.rpcUrl, 'anvil_setBalance', [account.address, numberToHex(parseEther('10'))]);
  return createWalletClient({
    account,
    chain: defineChain({
      id: chain.chainId,
      name: 'local',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [chain.rpcUrl] } },
    }),
    transport: http(chain.rpcUrl),
    pollingInterval: 100,
  }).extend(publicActions) as OperatorClient;
}

async function subscribed(balance: bigint) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const { account } = await deployFundedDeleGator(chain, owner.address, balance);
  const executor = await executorClient();
  const now = (await client.getBlock()).timestamp;
  const periodCaveat = periodTransferCaveat(framework, {
    token: chain.contracts.usdc!,
    periodAmount: AMOUNT,
    periodDuration: 30n * 86_400n,
    startTime: now - 60n,
  });
  const delegation: Delegation = await signDelegation(
    owner,
    {
      delegate: executor.account.address,
      delegator: account.address,
      authority: ROOT_AUTHORITY,
      caveats: [periodCaveat],
      salt: BigInt(Date.now()),
    },
    chain,
  );
  const request = async (depositAddress: Address): Promise<PeriodChargeRequest> => ({
    delegation,
    periodCaveat,
    token: chain.contracts.usdc!,
    customer: account.address,
    depositAddress,
    amount: AMOUNT,
    fromBlock: await client.getBlockNumber(),
  });
  return { owner, customer: account.address, executor, delegation, request };
}

const freshDepositAddress = () => privateKeyToAccount(generatePrivateKey()).address;

describe('charging one period', () => {
  it('moves exactly the amount into the deposit address, once', async () => {
    const { customer, executor, request } = await subscribed(100n * TOKENS);
    const depositAddress = freshDepositAddress();
    const charge = await request(depositAddress);
    const outcome = await chargePeriod(executor, framework, charge);
    expect(outcome).toMatchObject({ kind: 'redeemed', alreadyDone: false });
    expect(await usdcBalance(chain, depositAddress)).toBe(AMOUNT);
    expect(await usdcBalance(chain, customer)).toBe(90n * TOKENS);

    // The activity retried: the same period, the same deposit address.
    const again = await chargePeriod(executor, framework, charge);
    expect(again).toEqual({
      kind: 'redeemed',
      txHash: (outcome as { txHash: string }).txHash,
      alreadyDone: true,
    });
    expect(await usdcBalance(chain, customer)).toBe(90n * TOKENS);
  });

  it('a retry after a redemption that was never recorded finds it and charges nothing more', async () => {
    const { customer, executor, delegation, request } = await subscribed(100n * TOKENS);
    const depositAddress = freshDepositAddress();
    const charge = await request(depositAddress);
    // The worker sent the redemption and died before recording it.
    const sent = await executor.sendTransaction({
      to: framework.delegationManager,
      data: encodePeriodicChargeRedemption({
        delegation,
        token: charge.token,
        payee: depositAddress,
        amount: AMOUNT,
      }),
    });
    await executor.waitForTransactionReceipt({ hash: sent });

    await expect(chargePeriod(executor, framework, charge)).resolves.toEqual({
      kind: 'redeemed',
      txHash: sent,
      alreadyDone: true,
    });
    expect(await usdcBalance(chain, customer)).toBe(90n * TOKENS);
    expect(await usdcBalance(chain, depositAddress)).toBe(AMOUNT);
  });

  it('a balance below the amount charges nothing', async () => {
    const { customer, executor, request } = await subscribed(AMOUNT - 1n);
    const depositAddress = freshDepositAddress();
    await expect(chargePeriod(executor, framework, await request(depositAddress))).resolves.toEqual({
      kind: 'failed',
      failureReason: 'insufficient_balance',
    });
    expect(await usdcBalance(chain, customer)).toBe(AMOUNT - 1n);
    expect(await usdcBalance(chain, depositAddress)).toBe(0n);
  });

  it('a revoked permission is never redeemed', async () => {
    const { owner, customer, executor, delegation, request } = await subscribed(100n * TOKENS);
    await executeAsDeleGator(chain, owner, customer, {
      target: framework.delegationManager,
      value: 0n,
      data: encodeFunctionData({
        abi: delegationManagerAbi,
        functionName: 'disableDelegation',
        args: [delegation],
      }),
    });
    const depositAddress = freshDepositAddress();
    await expect(chargePeriod(executor, framework, await request(depositAddress))).resolves.toEqual({
      kind: 'failed',
      failureReason: 'permission_revoked',
    });
    expect(await usdcBalance(chain, customer)).toBe(100n * TOKENS);
  });

  it('a second deposit address in the same period is refused by the enforcer state, before any send', async () => {
    const { customer, executor, request } = await subscribed(100n * TOKENS);
    await chargePeriod(executor, framework, await request(freshDepositAddress()));
    await expect(chargePeriod(executor, framework, await request(freshDepositAddress()))).resolves.toEqual({
      kind: 'failed',
      failureReason: 'period_allowance_used',
    });
    expect(await usdcBalance(chain, customer)).toBe(90n * TOKENS);
  });
});
