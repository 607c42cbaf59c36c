import { type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { getBlock, sendTransaction } from 'viem/actions';
import { ROOT_AUTHORITY, type Delegation } from '../../chain/delegations';
import {
  decodePeriodTransferTerms,
  encodePeriodicChargeRedemption,
  periodTransferCaveat,
  readPeriodAllowance,
  type PeriodTransferTerms,
} from '../../chain/periodicTransfers';
import { testStack } from '../harness/stack';
import { fundedWallet, publicClientFor } from '../paymaster/smartAccounts';
import {
  deployFundedDeleGator,
  frameworkOn,
  mined,
  signDelegation,
  usdcBalance,
} from '../delegation/delegatorAccounts';

/**
 * A subscription's permission on the real ERC20PeriodTransferEnforcer of a local chain: the delegate
 * moves exactly the period amount once per period, a second charge in the period and a charge above the
 * customer's balance move nothing, and the enforcer's state says whether the period was charged.
 */

const stack = testStack();
const chain = stack.chains.find((candidate) => candidate.chainId === 84532)!;
const TOKENS = 1_000_000n; // USDC: 6 decimals
const DAY = 86_400n;

async function subscribedCustomer(balance: bigint, periodAmount: bigint) {
  const framework = frameworkOn(chain);
  const owner = privateKeyToAccount(generatePrivateKey());
  const { account } = await deployFundedDeleGator(chain, owner.address, balance);
  const executor = await fundedWallet(chain.rpcUrl, chain.chainId);
  const now = (await getBlock(publicClientFor(chain.rpcUrl))).timestamp;
  const terms: PeriodTransferTerms = {
    token: chain.contracts.usdc!,
    periodAmount,
    periodDuration: 30n * DAY,
    startTime: now - DAY,
  };
  const caveat = periodTransferCaveat(framework, terms);
  const delegation: Delegation = await signDelegation(
    owner,
    {
      delegate: executor.account.address,
      delegator: account.address,
      authority: ROOT_AUTHORITY,
      caveats: [caveat],
      salt: BigInt(Date.now()),
    },
    chain,
  );
  const charge = (payee: Address, amount: bigint) =>
    sendTransaction(executor, {
      to: framework.delegationManager,
      data: encodePeriodicChargeRedemption({ delegation, token: terms.token, payee, amount }),
    });
  const allowance = () =>
    readPeriodAllowance(publicClientFor(chain.rpcUrl), { framework, delegation, caveat });
  return { customer: account.address, terms, caveat, charge, allowance };
}

const freshPayee = () => privateKeyToAccount(generatePrivateKey()).address;

describe('periodic transfers on the ERC20PeriodTransferEnforcer', () => {
  it('encodes the enforcer terms and reads them back', async () => {
    const { terms, caveat } = await subscribedCustomer(0n, 5n * TOKENS);
    expect(caveat.enforcer).toBe(frameworkOn(chain).erc20PeriodTransferEnforcer);
    expect(decodePeriodTransferTerms(caveat.terms)).toEqual(terms);
    expect(decodePeriodTransferTerms('0x1234')).toBeUndefined();
  });

  it('moves exactly the period amount once; a second charge in the period reverts and moves nothing', async () => {
    const { customer, charge, allowance } = await subscribedCustomer(100n * TOKENS, 10n * TOKENS);
    const payee = freshPayee();
    expect(await allowance()).toEqual({ available: 10n * TOKENS, currentPeriod: 1n, revoked: false });

    await mined(publicClientFor(chain.rpcUrl), await charge(payee, 10n * TOKENS));
    expect(await usdcBalance(chain, payee)).toBe(10n * TOKENS);
    expect(await usdcBalance(chain, customer)).toBe(90n * TOKENS);
    expect((await allowance()).available).toBe(0n);

    await expect(charge(freshPayee(), 10n * TOKENS)).rejects.toThrow(/transfer-amount-exceeded/);
    await expect(charge(freshPayee(), 1n)).rejects.toThrow(/transfer-amount-exceeded/);
    expect(await usdcBalance(chain, customer)).toBe(90n * TOKENS);
  });

  it('a balance below the period amount charges nothing and leaves the period chargeable', async () => {
    const { customer, charge, allowance } = await subscribedCustomer(3n * TOKENS, 10n * TOKENS);
    const payee = freshPayee();
    await expect(charge(payee, 10n * TOKENS)).rejects.toThrow();
    expect(await usdcBalance(chain, customer)).toBe(3n * TOKENS);
    expect(await usdcBalance(chain, payee)).toBe(0n);
    expect((await allowance()).available).toBe(10n * TOKENS);
  });
});
