import * as bytecode from '@metamask/delegation-abis/bytecode';
import {
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type Transport,
  encodeAbiParameters,
  keccak256,
  toHex,
} from 'viem';
import { deployDeterministic } from '../../chain/deterministicDeployer';
import type { DelegationFrameworkContracts } from '../../chain/delegationFramework';

/**
 * Deploys MetaMask's Delegation Framework on a local chain from the bytecode that
 * `@metamask/delegation-abis` ships (the release chain/delegationFramework.ts names): the
 * DelegationManager, the caveat enforcers of a delegated ERC-20 transfer and of a subscription's periodic one, the HybridDeleGator
 * account implementation (linked against its P-256 verifier library) and the factory of account
 * proxies. Everything goes through the deterministic deployer, so a second run, or a second caller,
 * finds the contracts in place and sends nothing.
 */

const FRAMEWORK_SALT: Hex = keccak256(toHex('stablepay.delegation-framework'));

/**
 * HybridDeleGator calls the SCL P-256 verifier as an external library; solc leaves this placeholder
 * (keccak256 of `lib/SCL/src/lib/libSCL_RIP7212.sol:SCL_RIP7212`, first 17 bytes) for its address.
 */
const SCL_RIP7212_PLACEHOLDER = '__$b8f96b288d4d0429e38b8ed50fd423070f$__';

/** The shipped bytecode is not what this module was written against. */
export class DelegationFrameworkBytecodeError extends Error {
  override name = 'DelegationFrameworkBytecodeError';
}

export interface DeployDelegationFrameworkParameters {
  /** Owner of the DelegationManager (may pause it). */
  owner: Address;
  /** The EntryPoint (v0.7) DeleGator accounts accept user operations from. */
  entryPoint: Address;
}

/** Deploys the framework (whatever is missing) and returns its addresses. */
export async function deployDelegationFramework(
  client: Client<Transport, Chain, Account>,
  { owner, entryPoint }: DeployDelegationFrameworkParameters,
): Promise<DelegationFrameworkContracts> {
  const deploy = (initCode: Hex) => deployDeterministic(client, { initCode, salt: FRAMEWORK_SALT });
  // Nothing in the first wave depends on anything else; the account implementation needs the
  // manager and the verifier library.
  const [
    delegationManager,
    erc20TransferAmountEnforcer,
    timestampEnforcer,
    redeemerEnforcer,
    allowedCalldataEnforcer,
    valueLteEnforcer,
    nonceEnforcer,
    erc20PeriodTransferEnforcer,
    simpleFactory,
    p256Verifier,
  ] = await Promise.all([
    deploy(withArguments(bytecode.DelegationManager, [{ type: 'address' }], [owner])),
    deploy(bytecode.ERC20TransferAmountEnforcer),
    deploy(bytecode.TimestampEnforcer),
    deploy(bytecode.RedeemerEnforcer),
    deploy(bytecode.AllowedCalldataEnforcer),
    deploy(bytecode.ValueLteEnforcer),
    deploy(bytecode.NonceEnforcer),
    deploy(bytecode.ERC20PeriodTransferEnforcer),
    deploy(bytecode.SimpleFactory),
    deploy(bytecode.SCL_RIP7212),
  ]);
  const hybridDeleGatorImpl = await deploy(
    withArguments(
      linkP256Verifier(bytecode.HybridDeleGator, p256Verifier),
      [{ type: 'address' }, { type: 'address' }],
      [delegationManager, entryPoint],
    ),
  );
  return {
    delegationManager,
    erc20TransferAmountEnforcer,
    timestampEnforcer,
    redeemerEnforcer,
    allowedCalldataEnforcer,
    valueLteEnforcer,
    nonceEnforcer,
    erc20PeriodTransferEnforcer,
    hybridDeleGatorImpl,
    simpleFactory,
  };
}

function withArguments(creationCode: string, types: { type: string }[], values: readonly unknown[]): Hex {
  return `${creationCode}${encodeAbiParameters(types, values).slice(2)}` as Hex;
}

function linkP256Verifier(creationCode: string, library: Address): Hex {
  if (!creationCode.includes(SCL_RIP7212_PLACEHOLDER)) {
    throw new DelegationFrameworkBytecodeError(
      'HybridDeleGator bytecode from @metamask/delegation-abis no longer links SCL_RIP7212 where expected',
    );
  }
  const linked = creationCode.split(SCL_RIP7212_PLACEHOLDER).join(library.slice(2).toLowerCase());
  if (linked.includes('__$')) {
    throw new DelegationFrameworkBytecodeError(
      'HybridDeleGator bytecode from @metamask/delegation-abis needs a library this deployer does not link',
    );
  }
  return linked as Hex;
}
