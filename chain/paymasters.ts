import {
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type Transport,
  encodeAbiParameters,
  keccak256,
  parseEther,
  toHex,
} from 'viem';
import { readContract, waitForTransactionReceipt, writeContract } from 'viem/actions';
import { ManagedPaymasterV07, ManagedPaymasterV08 } from '../contracts/artifacts';
import { deployDeterministic, deterministicDeploymentAddress } from './deterministicDeployer';
import {
  ENTRY_POINT_V07_ADDRESS,
  ENTRY_POINT_V08_ADDRESS,
  type EntryPointVersion,
  entryPointAbi,
} from './entryPoints';
import { STABLECOINS } from './localStablecoins';

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

const PAYMASTER_SALT: Hex = keccak256(toHex('stablepay.managed-paymaster'));

export interface PaymasterIdentity {
  version: EntryPointVersion;
  /** May withdraw the deposit and stake, collected tokens, and rotate the signer. */
  owner: Address;
  /** The signing service's address; only its signatures authorize payment. */
  verifyingSigner: Address;
}

function initCode({ version, owner, verifyingSigner }: PaymasterIdentity): Hex {
  const { artifact, entryPoint } = PAYMASTER_RELEASES[version];
  const args = encodeAbiParameters(
    [{ type: 'address' }, { type: 'address' }, { type: 'address' }],
    [entryPoint, owner, verifyingSigner],
  );
  return `${artifact.bytecode}${args.slice(2)}` as Hex;
}

/** Where the paymaster of this release, owner and signer lives (the same address on every chain). */
export function paymasterAddress(identity: PaymasterIdentity): Address {
  return deterministicDeploymentAddress({ initCode: initCode(identity), salt: PAYMASTER_SALT });
}

/** Deploys the paymaster (when absent) and returns its address. Its EntryPoint must exist already. */
export async function deployPaymaster(
  client: Client<Transport, Chain, Account>,
  identity: PaymasterIdentity,
): Promise<Address> {
  return deployDeterministic(client, { initCode: initCode(identity), salt: PAYMASTER_SALT });
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
 * Local chains: 100 ETH of deposit (topped up when under 10), and a 1 ETH stake with a one-day
 * unstake delay, above Alto's defaults (`--min-entity-stake 1`, `--min-entity-unstake-delay 1`).
 */
export const LOCAL_PAYMASTER_FUNDING: PaymasterFunding = {
  minimumDeposit: parseEther('10'),
  targetDeposit: parseEther('100'),
  stake: parseEther('1'),
  unstakeDelaySec: 86_400,
};

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

/** The paymaster for `version` in a deployment's `contracts`, if it has one. */
export function paymasterFromContracts(
  contracts: Record<string, Address> | undefined,
  version: EntryPointVersion,
): Address | undefined {
  return contracts?.[PAYMASTER_RELEASES[version].contractKey];
}

/** Local chains price ether at 3,000 USD, so a USD stablecoin is worth 3,000 whole tokens per ether. */
const LOCAL_USD_PER_ETHER = 3_000n;

/**
 * The signer's ERC-20 whitelist for local chains (the SIGNER_ERC20_TOKENS shape): every local
 * stablecoin at 3,000 whole tokens per ether, i.e. 3000 × 10^decimals base units per 1e18 wei.
 */
export function localErc20GasTokenRates(
  chains: { chainId: number; contracts: Record<string, Address> }[],
): Record<string, Record<string, string>> {
  return Object.fromEntries(
    chains.map(({ chainId, contracts }) => [
      String(chainId),
      Object.fromEntries(
        STABLECOINS.flatMap(({ contractKey, decimals }) =>
          contracts[contractKey]
            ? [[contracts[contractKey], String(LOCAL_USD_PER_ETHER * 10n ** BigInt(decimals))]]
            : [],
        ),
      ),
    ]),
  );
}
