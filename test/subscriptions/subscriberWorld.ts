import { encodeFunctionData, numberToHex, parseEther, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { getBlock } from 'viem/actions';
import { ROOT_AUTHORITY, delegationManagerAbi, type Delegation } from '../../chain/delegations';
import { periodTransferCaveat } from '../../chain/periodicTransfers';
import { periodSeconds } from '../../subscriptions/periods';
import type { PlanInterval } from '../../db/schema';
import { startAnvilChains, type StartAnvilChainsReturnType } from '../../dev/services/anvil';
import { testStack } from '../harness/stack';
import { publicClientFor, rpc } from '../paymaster/smartAccounts';
import {
  deployFundedDeleGator,
  executeAsDeleGator,
  frameworkOn,
  signDelegation,
  type LocalChain,
} from '../delegation/delegatorAccounts';

/**
 * Customers of the subscription tests (issue 42): a DeleGator account funded with test USDC on a local
 * chain, and the periodic permission it signs for a plan — exact, or changed in one way — to an executor.
 */

export const TOKENS = 1_000_000n;

export function localChain(chainId = 84532): LocalChain {
  return testStack().chains.find((candidate) => candidate.chainId === chainId)!;
}

export interface Customer {
  owner: PrivateKeyAccount;
  account: Address;
  chain: LocalChain;
}

export async function newCustomer(usdc: bigint, chain = localChain()): Promise<Customer> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const { account } = await deployFundedDeleGator(chain, owner.address, usdc);
  return { owner, account: account.address, chain };
}

/** A fresh executor key with ETH for gas on the chain. */
export async function fundedExecutorKey(chain = localChain()) {
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  await rpc(chain.rpcUrl, 'anvil_setBalance', [address, numberToHex(parseEther('10'))]);
  return { key, address };
}

/**
 * A private fork of the stack's chain (same id and contracts), for a test that moves its clock or holds its
 * mempool, which would move every other file's on the shared chain; with a fresh executor key funded on it.
 */
export async function forkedChainWithExecutor(): Promise<{
  fork: StartAnvilChainsReturnType;
  chain: LocalChain;
  executorKey: Awaited<ReturnType<typeof fundedExecutorKey>>;
}> {
  const shared = localChain();
  const fork = await startAnvilChains({
    chains: [{ chainId: shared.chainId, forkUrl: shared.rpcUrl }],
    silent: true,
  });
  const chain = { ...shared, rpcUrl: fork.chains[0]!.rpcUrl };
  try {
    return { fork, chain, executorKey: await fundedExecutorKey(chain) };
  } catch (error) {
    // The caller has no fork to stop yet.
    await fork.stop();
    throw error;
  }
}

export async function chainNow(chain = localChain()): Promise<bigint> {
  return (await getBlock(publicClientFor(chain.rpcUrl))).timestamp;
}

/** The customer's signed periodic permission for `amount` base units per plan period to `executor`. */
export async function periodicPermission(
  customer: Customer,
  {
    executor,
    amount,
    interval = 'month',
    intervalCount = 1,
    startTime,
  }: {
    executor: Address;
    amount: bigint;
    interval?: PlanInterval;
    intervalCount?: number;
    startTime?: bigint;
  },
): Promise<Delegation> {
  const framework = frameworkOn(customer.chain);
  return signDelegation(
    customer.owner,
    {
      delegate: executor,
      delegator: customer.account,
      authority: ROOT_AUTHORITY,
      caveats: [
        periodTransferCaveat(framework, {
          token: customer.chain.contracts.usdc!,
          periodAmount: amount,
          periodDuration: periodSeconds(interval, intervalCount),
          startTime: startTime ?? (await chainNow(customer.chain)) - 60n,
        }),
      ],
      salt: BigInt(Date.now()) * 1000n + BigInt(Math.floor(Math.random() * 1000)),
    },
    customer.chain,
  );
}

/** The subscribe body as the page sends it (the salt as a decimal string). */
export const subscribeBodyOf = (delegation: Delegation, chainId = 84532) => ({
  chainId,
  token: 'USDC',
  delegation: {
    ...delegation,
    salt: delegation.salt.toString(),
    caveats: delegation.caveats.map(({ enforcer, terms, args }) => ({ enforcer, terms, args })),
  },
});

/** The customer disables the delegation at the manager (revokes the permission on chain). */
export async function revoke(customer: Customer, delegation: Delegation): Promise<void> {
  await executeAsDeleGator(customer.chain, customer.owner, customer.account, {
    target: frameworkOn(customer.chain).delegationManager,
    value: 0n,
    data: encodeFunctionData({
      abi: delegationManagerAbi,
      functionName: 'disableDelegation',
      args: [delegation],
    }),
  });
}
