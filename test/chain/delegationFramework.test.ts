import { type Address, encodeFunctionData, getAddress, hashDomain } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { getBlock, readContract, simulateContract, writeContract } from 'viem/actions';
import {
  DELEGATION_FRAMEWORK_CONTRACT_NAMES,
  DELEGATION_FRAMEWORK_VERSION,
  type DelegationFrameworkContractKey,
} from '../../chain/delegationFramework';
import {
  ROOT_AUTHORITY,
  type Delegation,
  type Erc20TransferPermissionTerms,
  delegationManagerAbi,
  encodePermissionContext,
  encodeSingleExecution,
  erc20TransferPermissionCaveats,
  nonceEnforcerAbi,
  SINGLE_DEFAULT_MODE,
} from '../../chain/delegations';
import { testStack } from '../harness/stack';
import { fundedWallet, publicClientFor } from '../paymaster/smartAccounts';
import {
  deployFundedDeleGator,
  executeAsDeleGator,
  frameworkOn,
  mined,
  signDelegation,
  usdcBalance,
  usdcTransfer,
} from '../delegation/delegatorAccounts';

/**
 * MetaMask's Delegation Framework on the local chains (deployed from @metamask/delegation-abis): every
 * chain lists it in the deployments file, and a root delegation with the rule-7 caveats lets its
 * delegate move the delegator's tokens within the allowance and nothing else.
 */

const stack = testStack();
const chain = stack.chains.find((candidate) => candidate.chainId === 84532)!;

describe('the Delegation Framework on the local chains', () => {
  it.each(stack.chains.map((local) => [local.chainId, local] as const))(
    'chain %i lists every framework contract in the deployments file, each with code',
    async (_chainId, local) => {
      const client = publicClientFor(local.rpcUrl);
      for (const key of Object.keys(
        DELEGATION_FRAMEWORK_CONTRACT_NAMES,
      ) as DelegationFrameworkContractKey[]) {
        const address = local.contracts[key];
        expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
        expect((await client.getCode({ address: address! }))?.length).toBeGreaterThan(2);
      }
    },
  );

  it(`the manager is release ${DELEGATION_FRAMEWORK_VERSION}, with the EIP-712 domain delegations are signed in`, async () => {
    const client = publicClientFor(chain.rpcUrl);
    const { delegationManager } = frameworkOn(chain);
    expect(
      await readContract(client, {
        address: delegationManager,
        abi: delegationManagerAbi,
        functionName: 'VERSION',
      }),
    ).toBe(DELEGATION_FRAMEWORK_VERSION);
    expect(
      await readContract(client, {
        address: delegationManager,
        abi: delegationManagerAbi,
        functionName: 'getDomainHash',
      }),
    ).toBe(
      hashDomain({
        domain: {
          name: 'DelegationManager',
          version: '1',
          chainId: BigInt(chain.chainId),
          verifyingContract: delegationManager,
        },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
        },
      }),
    );
  });
});

describe('a root delegation bound by the transfer caveats (allowance, expiry, redeemer, payee, value, nonce)', () => {
  const owner = privateKeyToAccount(generatePrivateKey());
  const payee = getAddress(privateKeyToAccount(generatePrivateKey()).address);
  let delegator: Address;
  let delegate: Awaited<ReturnType<typeof fundedWallet>>;

  beforeAll(async () => {
    ({
      account: { address: delegator },
    } = await deployFundedDeleGator(chain, owner.address, 100_000_000n));
    delegate = await fundedWallet(chain.rpcUrl, chain.chainId);
  });

  const latestTimestamp = async () => (await getBlock(publicClientFor(chain.rpcUrl))).timestamp;

  async function grant(terms: Partial<Erc20TransferPermissionTerms> = {}): Promise<Delegation> {
    const framework = frameworkOn(chain);
    const nonce = await readContract(publicClientFor(chain.rpcUrl), {
      address: framework.nonceEnforcer,
      abi: nonceEnforcerAbi,
      functionName: 'currentNonce',
      args: [framework.delegationManager, delegator],
    });
    return signDelegation(
      owner,
      {
        delegate: delegate.account.address,
        delegator,
        authority: ROOT_AUTHORITY,
        caveats: erc20TransferPermissionCaveats(framework, {
          token: chain.contracts.usdc!,
          allowance: 10_000_000n,
          payee,
          validUntil: (await latestTimestamp()) + 3600n,
          redeemer: delegate.account.address,
          nonce,
          ...terms,
        }),
        salt: BigInt(Date.now()),
      },
      chain,
    );
  }

  const redeemArgs = (delegation: Delegation, amount: bigint, to = payee) =>
    [
      [encodePermissionContext([delegation])],
      [SINGLE_DEFAULT_MODE],
      [encodeSingleExecution({ target: chain.contracts.usdc!, value: 0n, data: usdcTransfer(to, amount) })],
    ] as const;

  async function redeem(delegation: Delegation, amount: bigint, to = payee, from = delegate): Promise<void> {
    await mined(
      from,
      await writeContract(from, {
        address: frameworkOn(chain).delegationManager,
        abi: delegationManagerAbi,
        functionName: 'redeemDelegations',
        args: redeemArgs(delegation, amount, to),
      }),
    );
  }

  const refusal = (delegation: Delegation, amount: bigint, to = payee, from = delegate) =>
    simulateContract(from, {
      account: from.account,
      address: frameworkOn(chain).delegationManager,
      abi: delegationManagerAbi,
      functionName: 'redeemDelegations',
      args: redeemArgs(delegation, amount, to),
    });

  it('moves the delegator’s tokens to the payee within the allowance, and refuses the transfer that would exceed it', async () => {
    const delegation = await grant();
    const before = await usdcBalance(chain, delegator);
    await redeem(delegation, 6_000_000n);
    await redeem(delegation, 4_000_000n);
    expect(await usdcBalance(chain, payee)).toBe(10_000_000n);
    expect(await usdcBalance(chain, delegator)).toBe(before - 10_000_000n);
    await expect(refusal(delegation, 1n)).rejects.toThrow(/ERC20TransferAmountEnforcer:allowance-exceeded/);
  });

  it('refuses another payee, another redeemer, an expired delegation and one revoked by a nonce increment', async () => {
    const other = getAddress(privateKeyToAccount(generatePrivateKey()).address);
    const delegation = await grant();
    await expect(refusal(delegation, 1n, other)).rejects.toThrow(/AllowedCalldataEnforcer:invalid-calldata/);

    const stranger = await fundedWallet(chain.rpcUrl, chain.chainId);
    await expect(refusal(delegation, 1n, payee, stranger)).rejects.toThrow(/InvalidDelegate/);
    const forAnyDelegate = await grant({ redeemer: stranger.account.address });
    await expect(refusal(forAnyDelegate, 1n)).rejects.toThrow(/RedeemerEnforcer:unauthorized-redeemer/);

    const expired = await grant({ validUntil: (await latestTimestamp()) - 1n });
    await expect(refusal(expired, 1n)).rejects.toThrow(/TimestampEnforcer:expired-delegation/);

    // The owner revokes every outstanding delegation of its account by moving the account's nonce on.
    const framework = frameworkOn(chain);
    await executeAsDeleGator(chain, owner, delegator, {
      target: framework.nonceEnforcer,
      value: 0n,
      data: encodeFunctionData({
        abi: nonceEnforcerAbi,
        functionName: 'incrementNonce',
        args: [framework.delegationManager],
      }),
    });
    await expect(refusal(delegation, 1n)).rejects.toThrow(/NonceEnforcer:invalid-nonce/);
    expect(await usdcBalance(chain, other)).toBe(0n);
    expect(await usdcBalance(chain, payee)).toBe(10_000_000n);
  });
});
