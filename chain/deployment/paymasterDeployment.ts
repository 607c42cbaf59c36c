import { type Account, type Address, type Chain, type Client, type Hex, type Transport } from 'viem';
import { readContract, waitForTransactionReceipt, writeContract } from 'viem/actions';
import { deployDeterministic } from '../deterministicDeployer';
import { type EntryPointVersion, entryPointAbi } from '../entryPoints';
import {
  PAYMASTER_RELEASES,
  PAYMASTER_SALT,
  type PaymasterIdentity,
  managedPaymasterAbi,
  paymasterInitCode,
} from '../paymasters';

/**
 * Deploying and funding the managed paymaster on a chain (deployment scripts and the local stack alike):
 * an EntryPoint deposit that pays for gas and a stake for the bundlers' reputation rules.
 */

/** Deploys the paymaster (when absent) and returns its address. Its EntryPoint must exist already. */
export async function deployPaymaster(
  client: Client<Transport, Chain, Account>,
  identity: PaymasterIdentity,
): Promise<Address> {
  return deployDeterministic(client, { initCode: paymasterInitCode(identity), salt: PAYMASTER_SALT });
}

export interface PaymasterFunding {
  /** Below this EntryPoint deposit the paymaster is topped up... */
  minimumDeposit: bigint;
  /** ...to this one. */
  targetDeposit: bigint;
  stake: bigint;
  unstakeDelaySec: number;
}

/**
 * Tops up the paymaster's EntryPoint deposit and stakes it, sending nothing when both are already
 * in place. `client`'s account pays, and must be the paymaster's owner to stake.
 */
export async function fundPaymaster(
  client: Client<Transport, Chain, Account>,
  {
    paymaster,
    version,
    funding,
  }: { paymaster: Address; version: EntryPointVersion; funding: PaymasterFunding },
): Promise<void> {
  const { entryPoint } = PAYMASTER_RELEASES[version];
  const info = await readContract(client, {
    address: entryPoint,
    abi: entryPointAbi,
    functionName: 'getDepositInfo',
    args: [paymaster],
  });
  const transactions: Promise<Hex>[] = [];
  if (info.deposit < funding.minimumDeposit) {
    transactions.push(
      writeContract(client, {
        address: entryPoint,
        abi: entryPointAbi,
        functionName: 'depositTo',
        args: [paymaster],
        value: funding.targetDeposit - info.deposit,
      }),
    );
  }
  if (!info.staked || info.stake < funding.stake || info.unstakeDelaySec < funding.unstakeDelaySec) {
    transactions.push(
      writeContract(client, {
        address: paymaster,
        abi: managedPaymasterAbi,
        functionName: 'addStake',
        args: [funding.unstakeDelaySec],
        value: funding.stake > info.stake ? funding.stake - info.stake : 0n,
      }),
    );
  }
  for (const hash of await Promise.all(transactions)) {
    const receipt = await waitForTransactionReceipt(client, { hash });
    if (receipt.status !== 'success')
      throw new Error(`paymaster ${paymaster} funding transaction ${hash} reverted`);
  }
}
