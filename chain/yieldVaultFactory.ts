import {
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type Transport,
  keccak256,
  toHex,
} from 'viem';
import { YieldVaultFactory } from '../contracts/artifacts';
import { deployDeterministic, deterministicDeploymentAddress } from './deterministicDeployer';

/**
 * The yield vault factory (contracts/yield/): it takes no constructor arguments, so it lands at one address
 * on every chain through the deterministic deployer.
 */

const YIELD_VAULT_FACTORY_SALT: Hex = keccak256(toHex('stablepay.yieldVaultFactory'));

/** Where the factory built from this checkout's sources lives, on every chain. */
export function yieldVaultFactoryAddress(): Address {
  return deterministicDeploymentAddress({
    initCode: YieldVaultFactory.bytecode,
    salt: YIELD_VAULT_FACTORY_SALT,
  });
}

/** Deploys the factory (skipped when it is already there) and returns its address. */
export async function deployYieldVaultFactory(
  client: Client<Transport, Chain, Account>,
): Promise<{ yieldVaultFactory: Address }> {
  const yieldVaultFactory = await deployDeterministic(client, {
    initCode: YieldVaultFactory.bytecode,
    salt: YIELD_VAULT_FACTORY_SALT,
  });
  return { yieldVaultFactory };
}

/** The factory's set id of a yield deployment: its UUID, left-aligned in 32 bytes. */
export function vaultSetIdOf(deploymentId: string): Hex {
  const hex = deploymentId.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error(`${deploymentId} is not a UUID`);
  return `0x${hex.padEnd(64, '0')}`;
}
