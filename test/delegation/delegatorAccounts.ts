import {
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type Transport,
  encodeFunctionData,
  numberToHex,
  parseEther,
  parseEventLogs,
} from 'viem';
import { type UserOperation, entryPoint07Abi, toPackedUserOperation } from 'viem/account-abstraction';
import { readContract, sendTransaction, waitForTransactionReceipt, writeContract } from 'viem/actions';
import type { PrivateKeyAccount } from 'viem/accounts';
import {
  delegationFrameworkFromContracts,
  type DelegationFrameworkContracts,
} from '../../chain/delegationFramework';
import {
  type HybridDeleGatorAccount,
  encodeDeleGatorExecute,
  hybridDeleGatorAccount,
  signDeleGatorUserOperation,
} from '../../chain/deleGatorAccounts';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import { type Delegation, type UnsignedDelegation, delegationTypedData } from '../../chain/delegations';
import { TestStablecoin } from '../../contracts/artifacts';
import type { TestStack } from '../harness/stack';
import { fundedWallet, publicClientFor, rpc } from '../paymaster/smartAccounts';

/**
 * Delegators for delegation tests on the local chains: a merchant's HybridDeleGator deployed through the
 * framework's factory and holding local USDC, and the owner's signature of a delegation.
 */

export type LocalChain = TestStack['chains'][number];

/** The framework the local chain's deployments list (every chain of the test stack has one). */
export function frameworkOn(chain: LocalChain): DelegationFrameworkContracts {
  const framework = delegationFrameworkFromContracts(chain.contracts);
  if (!framework) throw new Error(`chain ${chain.chainId} lists no delegation framework`);
  return framework;
}

/** Deploys `owner`'s HybridDeleGator (from a freshly funded wallet) and mints it `usdc` base units. */
export async function deployFundedDeleGator(
  chain: LocalChain,
  owner: Address,
  usdc: bigint,
): Promise<{ account: HybridDeleGatorAccount; wallet: Client<Transport, Chain, Account> }> {
  const wallet = await fundedWallet(chain.rpcUrl, chain.chainId);
  const account = hybridDeleGatorAccount({ owner, framework: frameworkOn(chain) });
  await mined(wallet, await sendTransaction(wallet, { to: account.factory, data: account.factoryData }));
  await mined(
    wallet,
    await writeContract(wallet, {
      address: chain.contracts.usdc!,
      abi: TestStablecoin.abi,
      functionName: 'mint',
      args: [account.address, usdc],
    }),
  );
  return { account, wallet };
}

/** The owner's signature of a delegation from its DeleGator (checked by the account through ERC-1271). */
export async function signDelegation(
  owner: PrivateKeyAccount,
  delegation: UnsignedDelegation,
  chain: LocalChain,
): Promise<Delegation> {
  const signature = await owner.signTypedData(
    delegationTypedData(delegation, {
      chainId: chain.chainId,
      delegationManager: frameworkOn(chain).delegationManager,
    }),
  );
  return { ...delegation, signature };
}

export async function usdcBalance(chain: LocalChain, holder: Address): Promise<bigint> {
  return readContract(publicClientFor(chain.rpcUrl), {
    address: chain.contracts.usdc!,
    abi: TestStablecoin.abi,
    functionName: 'balanceOf',
    args: [holder],
  });
}

export const usdcTransfer = (to: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: TestStablecoin.abi, functionName: 'transfer', args: [to, amount] });

export async function mined(client: Client, hash: Hex): Promise<void> {
  const receipt = await waitForTransactionReceipt(client, { hash });
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
}

/**
 * Makes the DeleGator at `account` (deployed, owned by `owner`) perform one call: a user operation
 * signed by the owner, handed straight to the EntryPoint by a funded wallet acting as its own bundler.
 */
export async function executeAsDeleGator(
  chain: LocalChain,
  owner: PrivateKeyAccount,
  account: Address,
  execution: { target: Address; value: bigint; data: Hex },
): Promise<void> {
  const wallet = await fundedWallet(chain.rpcUrl, chain.chainId);
  const client = publicClientFor(chain.rpcUrl);
  await rpc(chain.rpcUrl, 'anvil_setBalance', [account, numberToHex(parseEther('1'))]);
  const nonce = await readContract(client, {
    address: ENTRY_POINT_V07_ADDRESS,
    abi: entryPoint07Abi,
    functionName: 'getNonce',
    args: [account, 0n],
  });
  const gasPrice = await client.getGasPrice();
  const userOperation: UserOperation<'0.7'> = {
    sender: account,
    nonce,
    callData: encodeDeleGatorExecute(execution),
    callGasLimit: 300_000n,
    verificationGasLimit: 300_000n,
    preVerificationGas: 60_000n,
    maxFeePerGas: gasPrice * 2n,
    maxPriorityFeePerGas: gasPrice,
    signature: '0x',
  };
  userOperation.signature = await signDeleGatorUserOperation({
    owner,
    userOperation,
    chainId: chain.chainId,
    entryPoint: ENTRY_POINT_V07_ADDRESS,
  });
  const hash = await writeContract(wallet, {
    address: ENTRY_POINT_V07_ADDRESS,
    abi: entryPoint07Abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation(userOperation)], wallet.account.address],
  });
  const receipt = await waitForTransactionReceipt(wallet, { hash });
  const [event] = parseEventLogs({
    abi: entryPoint07Abi,
    logs: receipt.logs,
    eventName: 'UserOperationEvent',
  });
  if (!event?.args.success) throw new Error(`the DeleGator's operation reverted (transaction ${hash})`);
}
