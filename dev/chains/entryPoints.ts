import entryPointV08Artifact from '@account-abstraction/contracts/artifacts/EntryPoint.json';
import entryPointV07Artifact from '@account-abstraction/contracts-v07/artifacts/EntryPoint.json';
import { type Account, type Address, type Chain, type Client, type Hex, type Transport, isHex } from 'viem';
import { deployDeterministic, deterministicDeploymentAddress } from '../../chain/deterministicDeployer';
import {
  ENTRY_POINT_V07_ADDRESS,
  ENTRY_POINT_V07_SALT,
  ENTRY_POINT_V08_ADDRESS,
  ENTRY_POINT_V08_SALT,
  type EntryPointVersion,
} from '../../chain/entryPoints';

/**
 * Local chains get ERC-4337 EntryPoint v0.7 and v0.8 from the `@account-abstraction/contracts` npm
 * artifacts (0.7.0 under the alias `@account-abstraction/contracts-v07`, and 0.8.0) through the
 * deterministic deployer with the canonical salts: both land at the canonical mainnet addresses.
 */

interface EntryPointRelease {
  salt: Hex;
  address: Address;
  artifact: { bytecode: string };
  packageName: string;
}

const RELEASES: Record<EntryPointVersion, EntryPointRelease> = {
  '0.7': {
    salt: ENTRY_POINT_V07_SALT,
    address: ENTRY_POINT_V07_ADDRESS,
    artifact: entryPointV07Artifact,
    packageName: '@account-abstraction/contracts-v07',
  },
  '0.8': {
    salt: ENTRY_POINT_V08_SALT,
    address: ENTRY_POINT_V08_ADDRESS,
    artifact: entryPointV08Artifact,
    packageName: '@account-abstraction/contracts',
  },
};

/** The installed artifact no longer produces the address this module promises. */
export class EntryPointArtifactMismatchError extends Error {
  override name = 'EntryPointArtifactMismatchError';
  constructor(version: EntryPointVersion, detail: string) {
    super(
      `EntryPoint v${version} from ${RELEASES[version].packageName}: ${detail}; ` +
        'the installed artifact differs from the released one.',
    );
  }
}

/** Deploys EntryPoint `version` (when absent) and returns its address, the canonical one. */
export async function deployEntryPoint(
  client: Client<Transport, Chain, Account>,
  { version }: { version: EntryPointVersion },
): Promise<Address> {
  const { salt, address, artifact } = RELEASES[version];
  const initCode = artifact.bytecode;
  if (!isHex(initCode) || initCode.length <= 2) {
    throw new EntryPointArtifactMismatchError(version, 'the artifact has no bytecode');
  }
  const predicted = deterministicDeploymentAddress({ initCode, salt });
  if (predicted !== address) {
    throw new EntryPointArtifactMismatchError(version, `it would land at ${predicted}, not at ${address}`);
  }
  return deployDeterministic(client, { initCode, salt });
}
