import { type Address, type Hex, encodeAbiParameters, keccak256, toHex } from 'viem';
import { ManagedPaymasterV07, ManagedPaymasterV08 } from '../contracts/artifacts';
import { deterministicDeploymentAddress } from './deterministicDeployer';
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS, type EntryPointVersion } from './entryPoints';

/**
 * The managed paymaster (contracts/paymaster/), one contract per EntryPoint release, deployed
 * through the deterministic deployer with its owner and verifying signer as constructor arguments,
 * then funded: an EntryPoint deposit that pays for gas and a stake for the bundlers' reputation rules.
 */

export const PAYMASTER_RELEASES = {
  '0.7': { artifact: ManagedPaymasterV07, entryPoint: ENTRY_POINT_V07_ADDRESS, contractKey: 'paymasterV07' },
  '0.8': { artifact: ManagedPaymasterV08, entryPoint: ENTRY_POINT_V08_ADDRESS, contractKey: 'paymasterV08' },
} as const satisfies Record<
  EntryPointVersion,
  { artifact: unknown; entryPoint: Address; contractKey: string }
>;

/** The ABI both releases share for everything but `getHash`'s user-operation struct (which is the same layout). */
export const managedPaymasterAbi = ManagedPaymasterV08.abi;

/** The key of a deployment's paymaster in `contracts` (deployments file, stack description). */
export type PaymasterContractKey = (typeof PAYMASTER_RELEASES)[EntryPointVersion]['contractKey'];

export const PAYMASTER_SALT: Hex = keccak256(toHex('stablepay.managed-paymaster'));

export interface PaymasterIdentity {
  version: EntryPointVersion;
  /** May withdraw the deposit and stake, collected tokens, and rotate the signer. */
  owner: Address;
  /** The signing service's address; only its signatures authorize payment. */
  verifyingSigner: Address;
}

export function paymasterInitCode({ version, owner, verifyingSigner }: PaymasterIdentity): Hex {
  const { artifact, entryPoint } = PAYMASTER_RELEASES[version];
  const args = encodeAbiParameters(
    [{ type: 'address' }, { type: 'address' }, { type: 'address' }],
    [entryPoint, owner, verifyingSigner],
  );
  return `${artifact.bytecode}${args.slice(2)}` as Hex;
}

/** Where the paymaster of this release, owner and signer lives (the same address on every chain). */
export function paymasterAddress(identity: PaymasterIdentity): Address {
  return deterministicDeploymentAddress({ initCode: paymasterInitCode(identity), salt: PAYMASTER_SALT });
}

/** The paymaster for `version` in a deployment's `contracts`, if it has one. */
export function paymasterFromContracts(
  contracts: Record<string, Address> | undefined,
  version: EntryPointVersion,
): Address | undefined {
  return contracts?.[PAYMASTER_RELEASES[version].contractKey];
}
