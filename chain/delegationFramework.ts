import { CHAIN_ID, DELEGATOR_CONTRACTS } from '@metamask/delegation-deployments';
import { getAddress, type Address } from 'viem';

/**
 * MetaMask's Delegation Framework (ERC-7710 delegations, the contracts behind ERC-7715 permissions):
 * the DelegationManager, the caveat enforcers a delegated ERC-20 transfer is bound by (SPEC
 * sponsorship rule 7), and the DeleGator smart account with its factory. Public networks use
 * MetaMask's own deployments as published in `@metamask/delegation-deployments`; local chains get
 * the same contracts deployed from `@metamask/delegation-abis` (chain/deployDelegationFramework.ts)
 * and list them in the deployments file under the keys below.
 */

/** The release whose deployments and bytecode we use (the npm packages ship its ABIs and bytecode). */
export const DELEGATION_FRAMEWORK_VERSION = '1.3.0';

/** Addresses of the framework on one chain (a type, not an interface, so it fits `Record<string, Address>`). */
export type DelegationFrameworkContracts = {
  delegationManager: Address;
  /** terms: token (20 bytes) ‖ maximum amount (uint256): caps the sum of `transfer` amounts. */
  erc20TransferAmountEnforcer: Address;
  /** terms: valid after (uint128) ‖ valid before (uint128), unix seconds, 0 = unbounded. */
  timestampEnforcer: Address;
  /** terms: the accounts allowed to redeem, 20 bytes each. */
  redeemerEnforcer: Address;
  /** terms: calldata offset (uint256) ‖ the bytes expected there; binds the transfer's payee. */
  allowedCalldataEnforcer: Address;
  /** terms: maximum native value (uint256). */
  valueLteEnforcer: Address;
  /** terms: the delegator's current nonce (uint256); the delegator revokes by incrementing it. */
  nonceEnforcer: Address;
  /**
   * terms: token (20 bytes) ‖ period amount ‖ period duration (s) ‖ start (unix s), uint256 each: at most the
   * period amount per period (ERC-7715 `erc20-token-periodic`); a subscription's permission (issue 42).
   */
  erc20PeriodTransferEnforcer: Address;
  /** Implementation behind every HybridDeleGator account proxy. */
  hybridDeleGatorImpl: Address;
  /** CREATE2 factory that deploys DeleGator account proxies. */
  simpleFactory: Address;
};

export type DelegationFrameworkContractKey = keyof DelegationFrameworkContracts;

/** Our deployments-file key → the contract's name in MetaMask's published deployments. */
export const DELEGATION_FRAMEWORK_CONTRACT_NAMES = {
  delegationManager: 'DelegationManager',
  erc20TransferAmountEnforcer: 'ERC20TransferAmountEnforcer',
  timestampEnforcer: 'TimestampEnforcer',
  redeemerEnforcer: 'RedeemerEnforcer',
  allowedCalldataEnforcer: 'AllowedCalldataEnforcer',
  valueLteEnforcer: 'ValueLteEnforcer',
  nonceEnforcer: 'NonceEnforcer',
  erc20PeriodTransferEnforcer: 'ERC20PeriodTransferEnforcer',
  hybridDeleGatorImpl: 'HybridDeleGatorImpl',
  simpleFactory: 'SimpleFactory',
} as const satisfies Record<DelegationFrameworkContractKey, string>;

const CONTRACT_KEYS = Object.keys(DELEGATION_FRAMEWORK_CONTRACT_NAMES) as DelegationFrameworkContractKey[];

/** Every chain id the published deployments know (`CHAIN_ID.mainnet`, `CHAIN_ID.sepolia`, …). */
export const DELEGATION_FRAMEWORK_CHAIN_IDS = CHAIN_ID;

/**
 * MetaMask's deployment of the framework on `chainId`, from `@metamask/delegation-deployments`;
 * undefined when that release lacks one of the contracts there.
 */
export function publishedDelegationFramework(chainId: number): DelegationFrameworkContracts | undefined {
  if (publishedByChain.has(chainId)) return publishedByChain.get(chainId);
  const published = DELEGATOR_CONTRACTS[DELEGATION_FRAMEWORK_VERSION]?.[chainId];
  const framework = published
    ? pickFramework((key) => published[DELEGATION_FRAMEWORK_CONTRACT_NAMES[key]])
    : undefined;
  publishedByChain.set(chainId, framework);
  return framework;
}

// Both lookups run for every paymaster request (the delegation manager of its chain) and checksum ten
// addresses each time: kept per chain and per deployments object, frozen so no caller can alter them.
const publishedByChain = new Map<number, DelegationFrameworkContracts | undefined>();
const fromContracts = new WeakMap<Record<string, Address>, DelegationFrameworkContracts | undefined>();

/** The framework listed in a deployments file's `contracts` of one chain, when it lists all of it. */
export function delegationFrameworkFromContracts(
  contracts: Record<string, Address> | undefined,
): DelegationFrameworkContracts | undefined {
  if (!contracts) return undefined;
  if (fromContracts.has(contracts)) return fromContracts.get(contracts);
  const framework = pickFramework((key) => contracts[key]);
  fromContracts.set(contracts, framework);
  return framework;
}

/**
 * The framework a chain uses: the deployments file's when it lists one (local chains), else MetaMask's
 * published deployment.
 */
export function resolveDelegationFramework(
  chainId: number,
  contracts: Record<string, Address> | undefined,
): DelegationFrameworkContracts | undefined {
  return delegationFrameworkFromContracts(contracts) ?? publishedDelegationFramework(chainId);
}

function pickFramework(
  addressOf: (key: DelegationFrameworkContractKey) => string | undefined,
): DelegationFrameworkContracts | undefined {
  const entries = CONTRACT_KEYS.map((key) => [key, addressOf(key)] as const);
  if (entries.some(([, address]) => address === undefined)) return undefined;
  return Object.freeze(
    Object.fromEntries(entries.map(([key, address]) => [key, getAddress(address!)])),
  ) as DelegationFrameworkContracts;
}
