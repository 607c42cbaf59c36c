import { type Address, encodeFunctionData, encodePacked } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { getBlock } from 'viem/actions';
import { ROOT_AUTHORITY, delegationManagerAbi, type Caveat, type Delegation } from '../../chain/delegations';
import { periodTransferCaveat, type PeriodTransferTerms } from '../../chain/periodicTransfers';
import { verifySubscriptionGrant, type ExpectedGrant } from '../../subscriptions/grantVerification';
import { periodSeconds } from '../../subscriptions/periods';
import { testStack } from '../harness/stack';
import { publicClientFor } from '../paymaster/smartAccounts';
import {
  deployFundedDeleGator,
  executeAsDeleGator,
  frameworkOn,
  signDelegation,
} from '../delegation/delegatorAccounts';

/**
 * A customer's permission judged against a plan before a subscription exists (issue 42, bad input):
 * the exact grant passes; less than the amount, another token, another chain, another delegate, another
 * period, an expired or revoked grant and a forged signature are refused with a sentence saying why.
 */

const stack = testStack();
const chain = stack.chains.find((candidate) => candidate.chainId === 84532)!;
const framework = frameworkOn(chain);
const client = publicClientFor(chain.rpcUrl);
const TOKENS = 1_000_000n;
const executor = privateKeyToAccount(generatePrivateKey()).address;

const customerKey = privateKeyToAccount(generatePrivateKey());
let customer: Address;
let expected: ExpectedGrant;
let exactTerms: PeriodTransferTerms;

beforeAll(async () => {
  ({
    account: { address: customer },
  } = await deployFundedDeleGator(chain, customerKey.address, 100n * TOKENS));
  const now = (await getBlock(client)).timestamp;
  expected = {
    chainId: chain.chainId,
    token: chain.contracts.usdc!,
    periodAmount: 10n * TOKENS,
    periodDuration: periodSeconds('month', 1),
    executor,
    now,
  };
  exactTerms = {
    token: expected.token,
    periodAmount: expected.periodAmount,
    periodDuration: expected.periodDuration,
    startTime: now,
  };
}, 120_000);

async function grant(
  change: {
    terms?: Partial<PeriodTransferTerms>;
    delegate?: Address;
    extra?: Caveat[];
    chainId?: number;
  } = {},
): Promise<Delegation> {
  const caveat = periodTransferCaveat(framework, { ...exactTerms, ...change.terms });
  return signDelegation(
    customerKey,
    {
      delegate: change.delegate ?? executor,
      delegator: customer,
      authority: ROOT_AUTHORITY,
      caveats: [caveat, ...(change.extra ?? [])],
      salt: BigInt(Date.now()) * 1000n + BigInt(Math.floor(Math.random() * 1000)),
    },
    { ...chain, chainId: change.chainId ?? chain.chainId },
  );
}

const expiry = (validBefore: bigint): Caveat => ({
  enforcer: framework.timestampEnforcer,
  terms: encodePacked(['uint128', 'uint128'], [0n, validBefore]),
  args: '0x',
});

const verify = (delegation: Delegation) => verifySubscriptionGrant(client, delegation, expected, framework);

describe('verifying a subscription grant', () => {
  it('accepts the exact periodic permission to the executor, with or without a future expiry', async () => {
    await expect(verify(await grant())).resolves.toEqual({ ok: true, terms: exactTerms });
    const expiring = await grant({ extra: [expiry(expected.now + 365n * 86_400n)] });
    await expect(verify(expiring)).resolves.toMatchObject({ ok: true });
  });

  it.each([
    [
      'less than the amount',
      () => grant({ terms: { periodAmount: 10n * TOKENS - 1n } }),
      'The permission allows 9999999 base units per period; the plan charges exactly 10000000',
    ],
    [
      'more than the amount',
      () => grant({ terms: { periodAmount: 11n * TOKENS } }),
      'The permission allows 11000000 base units per period; the plan charges exactly 10000000',
    ],
    [
      'another token',
      () => grant({ terms: { token: chain.contracts.usdt! } }),
      `The permission is for token ${chain.contracts.usdt}, not ${chain.contracts.usdc} on chain 84532`,
    ],
    [
      'another period',
      () => grant({ terms: { periodDuration: periodSeconds('week', 1) } }),
      "The permission's period is 604800 seconds; the plan's is 2592000",
    ],
    [
      'another delegate',
      () => grant({ delegate: customerKey.address }),
      `The permission is granted to ${customerKey.address}, not to the subscription executor ${executor}`,
    ],
    [
      'an expired grant',
      () => grant({ extra: [expiry(expected.now - 1n)] }),
      () => `The permission expired at ${new Date(Number(expected.now - 1n) * 1000).toISOString()}`,
    ],
    [
      'another caveat',
      () =>
        grant({
          extra: [{ enforcer: framework.valueLteEnforcer, terms: `0x${'00'.repeat(32)}`, args: '0x' }],
        }),
      'The permission must carry exactly one ERC20PeriodTransferEnforcer caveat of this chain (erc20-token-periodic), at most one expiry (TimestampEnforcer) and nothing else',
    ],
  ])('refuses %s', async (_case, make, reason) => {
    const refusal = typeof reason === 'function' ? reason() : reason;
    await expect(verify(await make())).resolves.toEqual({ ok: false, reason: refusal });
  });

  it('refuses a grant signed for another chain (its signature verifies nowhere else)', async () => {
    const verdict = await verify(await grant({ chainId: 1 }));
    expect(verdict).toMatchObject({ ok: false });
    expect(!verdict.ok && verdict.reason).toMatch(/^The permission's signature is not valid: /);
  });

  it('refuses a forged signature', async () => {
    const signed = await grant();
    const other = privateKeyToAccount(generatePrivateKey());
    const forged = { ...signed, signature: await other.signMessage({ message: 'not the delegation' }) };
    const verdict = await verify(forged);
    expect(!verdict.ok && verdict.reason).toMatch(/^The permission's signature is not valid: /);
  });

  it('refuses a grant the customer revoked at the delegation manager', async () => {
    const revoked = await grant();
    await executeAsDeleGator(chain, customerKey, customer, {
      target: framework.delegationManager,
      value: 0n,
      data: encodeFunctionData({
        abi: delegationManagerAbi,
        functionName: 'disableDelegation',
        args: [revoked],
      }),
    });
    await expect(verify(revoked)).resolves.toEqual({
      ok: false,
      reason: 'The permission was revoked on chain',
    });
  });
});
