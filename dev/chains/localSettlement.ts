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
import { readContract, waitForTransactionReceipt, writeContract } from 'viem/actions';
import { LocalMessenger, LocalStakedUSDe, LocalSwapRouter, StakingComposer } from '../../contracts/artifacts';
import { ANVIL_DEV_ACCOUNTS } from '../services/anvil';
import { deployDeterministic, deterministicDeploymentAddress } from '../../chain/deterministicDeployer';
import type { ForwarderSettlement } from '../../chain/forwarderFactory';

/**
 * The local stand-ins of the settlement path (contracts/local/): a swap router with settable rates, sUSDe
 * (an ERC-4626 over local USDe), a LayerZero-style messenger that the dev relayer (dev/relayer.ts) delivers
 * for, and the composer that stakes bridged USDe for the merchant. Each is deployed through the
 * deterministic deployer with chain-independent constructor arguments, so it has one address on every
 * local chain.
 */

/** Local chains settle on the Ethereum Sepolia stand-in; the two layer-2 stand-ins bridge to it. */
export const LOCAL_SETTLEMENT_CHAIN_ID = 11155111;

/** The only account that may flush forwarders on local chains (the worker's operator key): anvil's dev account 7. */
export const LOCAL_SETTLEMENT_OPERATOR = ANVIL_DEV_ACCOUNTS[7];

/** The account that deploys yield vault sets on local chains (the worker's YIELD_DEPLOYER_PRIVATE_KEY): anvil's dev account 3, apart from settlement. */
export const LOCAL_YIELD_DEPLOYER = ANVIL_DEV_ACCOUNTS[3];

/**
 * The subscription executor on local chains (the worker's SUBSCRIPTION_EXECUTOR_PRIVATE_KEY, the api's
 * SUBSCRIPTION_EXECUTOR_ADDRESS): anvil's dev account 6, apart from settlement and yield deploys. Tests
 * charge with generated keys of their own.
 */
export const LOCAL_SUBSCRIPTION_EXECUTOR = ANVIL_DEV_ACCOUNTS[6];

/** The only account that may deliver messenger packets on local chains (the dev relayer's key): anvil's dev account 8. */
export const LOCAL_RELAYER = ANVIL_DEV_ACCOUNTS[8];

/** How far below par a local swap may settle (0.5 %). */
export const LOCAL_MAX_SLIPPAGE_BPS = 50;

export interface LocalSettlementIdentity {
  /** Owns the swap router (may set rates). */
  owner: Address;
  /** The local USDe the router buys, the vault holds and the messenger carries. */
  usde: Address;
  /** The account the messenger accepts deliveries from. */
  relayer: Address;
}

/** Keys of a local deployment's `contracts` (the deployments file, .dev/stack.json). */
export type LocalSettlementAddresses = {
  swapRouter: Address;
  susde: Address;
  messenger: Address;
  stakingComposer: Address;
};

const saltOf = (name: string): Hex => keccak256(toHex(`stablepay.local.${name}`));

/** Creation code followed by ABI-encoded address constructor arguments. */
function withAddressArgs(bytecode: Hex, args: Address[]): Hex {
  const encoded = encodeAbiParameters(
    args.map(() => ({ type: 'address' })),
    args,
  );
  return `${bytecode}${encoded.slice(2)}` as Hex;
}

function initCodes({
  owner,
  usde,
  relayer,
}: LocalSettlementIdentity): Record<keyof LocalSettlementAddresses, Hex> {
  const susde = withAddressArgs(LocalStakedUSDe.bytecode, [usde]);
  const messenger = withAddressArgs(LocalMessenger.bytecode, [usde, relayer]);
  return {
    swapRouter: withAddressArgs(LocalSwapRouter.bytecode, [owner]),
    susde,
    messenger,
    // The composer names the messenger and vault, which are deterministic too: no need to wait for them.
    stakingComposer: withAddressArgs(StakingComposer.bytecode, [
      deterministicDeploymentAddress({ initCode: messenger, salt: saltOf('messenger') }),
      deterministicDeploymentAddress({ initCode: susde, salt: saltOf('susde') }),
    ]),
  };
}

/** Where the local settlement stand-ins of this owner, USDe and relayer live (the same on every local chain). */
export function localSettlementAddresses(identity: LocalSettlementIdentity): LocalSettlementAddresses {
  const codes = initCodes(identity);
  return Object.fromEntries(
    Object.entries(codes).map(([key, initCode]) => [
      key,
      deterministicDeploymentAddress({ initCode, salt: saltOf(key) }),
    ]),
  ) as LocalSettlementAddresses;
}

/**
 * Deploys the router, sUSDe, messenger and composer (skipping those already there). USDe must exist:
 * the vault reads its decimals when it is constructed.
 */
export async function deployLocalSettlement(
  client: Client<Transport, Chain, Account>,
  identity: LocalSettlementIdentity,
): Promise<LocalSettlementAddresses> {
  const deployed = await Promise.all(
    Object.entries(initCodes(identity)).map(async ([key, initCode]) => [
      key,
      await deployDeterministic(client, { initCode, salt: saltOf(key) }),
    ]),
  );
  return Object.fromEntries(deployed) as LocalSettlementAddresses;
}

/** The router rate that swaps one whole token for one whole other token: 10^(18 + decimalsOut − decimalsIn). */
export function parRateE18({ decimalsIn, decimalsOut }: { decimalsIn: number; decimalsOut: number }): bigint {
  return 10n ** BigInt(18 + decimalsOut - decimalsIn);
}

export interface SwapRate {
  tokenIn: Address;
  tokenOut: Address;
  rateE18: bigint;
}

/** Sets each pair's rate on the local router, sending only the `setRate`s that change something. */
export async function setLocalSwapRates(
  client: Client<Transport, Chain, Account>,
  { swapRouter, rates }: { swapRouter: Address; rates: SwapRate[] },
): Promise<void> {
  const current = await Promise.all(
    rates.map(({ tokenIn, tokenOut }) =>
      readContract(client, {
        address: swapRouter,
        abi: LocalSwapRouter.abi,
        functionName: 'rate',
        args: [tokenIn, tokenOut],
      }),
    ),
  );
  const changes = rates.filter((rate, index) => current[index] !== rate.rateE18);
  const hashes = await Promise.all(
    changes.map(({ tokenIn, tokenOut, rateE18 }) =>
      writeContract(client, {
        address: swapRouter,
        abi: LocalSwapRouter.abi,
        functionName: 'setRate',
        args: [tokenIn, tokenOut, rateE18],
      }),
    ),
  );
  for (const hash of hashes) {
    const receipt = await waitForTransactionReceipt(client, { hash });
    if (receipt.status !== 'success') throw new Error(`setRate on ${swapRouter} reverted (${hash})`);
  }
}

/** The settlement configuration of a local chain's ForwarderFactory, given its stand-ins. */
export function localForwarderSettlement({
  usde,
  settlement,
  operator = LOCAL_SETTLEMENT_OPERATOR.address,
  settlementChainId = LOCAL_SETTLEMENT_CHAIN_ID,
}: {
  usde: Address;
  settlement: LocalSettlementAddresses;
  operator?: Address;
  settlementChainId?: number;
}): ForwarderSettlement {
  return {
    operator,
    swapRouter: settlement.swapRouter,
    usde,
    stakedUsde: settlement.susde,
    messenger: settlement.messenger,
    settlementChainId: BigInt(settlementChainId),
    settlementComposer: settlement.stakingComposer,
    maxSlippageBps: LOCAL_MAX_SLIPPAGE_BPS,
  };
}
