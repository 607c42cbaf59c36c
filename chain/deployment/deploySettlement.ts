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
  zeroAddress,
} from 'viem';
import { readContract, waitForTransactionReceipt, writeContract } from 'viem/actions';
import {
  IV3SwapRouter,
  LayerZeroSettlementMessenger,
  LayerZeroStakingComposer,
  UniswapV3SwapAdapter,
} from '../../contracts/artifacts';
import { deployDeterministic, deterministicDeploymentAddress } from '../deterministicDeployer';
import { configureForwarderSettlement, deployForwarderFactory } from '../forwarderFactory';
import { networkByChainId } from '../../config/networks';
import { deployYieldVaultFactory } from '../yieldVaultFactory';
import { deployPaymaster } from './paymasterDeployment';

/**
 * Deploys our contracts on one network against the real protocols and configures them: the ForwarderFactory
 * (its forwarder implementation comes with it), the Uniswap v3 swap adapter with its pool fee tiers, on a
 * layer-2 the LayerZero messenger with its route to the settlement chain, on the settlement chain the
 * lzCompose staking composer and the yield vault factory (merchants' vaults stake in its sUSDe; no other chain
 * has an sUSDe to stake in), and the two managed paymasters. Everything goes through the deterministic
 * deployer, so the factory (same owner) has one address on every chain and a rerun sends only what differs.
 * Returns the `contracts` of the chain's deployments-file entry. Funding the paymasters is a separate step
 * (docs/deployment.md).
 */

/** The external contracts a chain's deployment points at (canonical on mainnets; see canonicalAddresses.ts). */
export interface ExternalContracts {
  usdc: Address;
  usdt: Address;
  usde: Address;
  /** The USDe OFT: Ethena's lockbox adapter on Ethereum, USDe itself on a layer-2. */
  usdeOft: Address;
  /** Settlement chain only. */
  susde?: Address;
  layerZeroEndpoint: Address;
  uniswapSwapRouter02: Address;
  entryPointV07: Address;
  entryPointV08: Address;
  /** Chainlink ETH/USD (8 decimals) for the paymaster's pricing; optional. */
  priceFeed?: Address;
  /** Uniswap v3 fee tier of the USDC/USDe and USDT/USDe pools to swap through (e.g. 100 = 0.01 %). */
  poolFees: { usdc: number; usdt: number };
}

export interface DeploySettlementParameters {
  chainId: number;
  /** Owns the factory, adapter and messenger (the deployer; hand over with Ownable2Step afterwards). */
  owner: Address;
  /** The worker's operator key, the only account that may flush. */
  operator: Address;
  /** The signing service's address (paymaster verifying signer). */
  paymasterSigner: Address;
  external: ExternalContracts;
  /** The settlement chain's external contracts (a layer-2 needs them to know its composer's address). */
  settlementExternal: Pick<ExternalContracts, 'layerZeroEndpoint' | 'usdeOft' | 'susde'>;
  maxSlippageBps?: number;
  /** Executor gas on the settlement chain for the OFT's lzReceive (0 when its enforced options cover it) and our lzCompose. */
  receiveGas?: bigint;
  composeGas?: bigint;
}

export const DEFAULT_MAX_SLIPPAGE_BPS = 50;
export const DEFAULT_RECEIVE_GAS = 200_000n;
export const DEFAULT_COMPOSE_GAS = 500_000n;

const saltOf = (name: string): Hex => keccak256(toHex(`stablepay.settlement.${name}`));

function args(types: string[], values: unknown[]): string {
  return encodeAbiParameters(
    types.map((type) => ({ type })),
    values,
  ).slice(2);
}

function composerInitCode(settlement: DeploySettlementParameters['settlementExternal']): Hex {
  if (!settlement.susde) throw new Error('the settlement chain has no sUSDe configured');
  return `${LayerZeroStakingComposer.bytecode}${args(
    ['address', 'address', 'address'],
    [settlement.layerZeroEndpoint, settlement.usdeOft, settlement.susde],
  )}` as Hex;
}

/** Where the staking composer of a settlement chain with these external contracts lives. */
export function stakingComposerAddress(
  settlement: DeploySettlementParameters['settlementExternal'],
): Address {
  return deterministicDeploymentAddress({
    initCode: composerInitCode(settlement),
    salt: saltOf('stakingComposer'),
  });
}

async function send(
  client: Client<Transport, Chain, Account>,
  call: Parameters<typeof writeContract>[1],
): Promise<void> {
  const hash = await writeContract(client, call);
  const receipt = await waitForTransactionReceipt(client, { hash });
  if (receipt.status !== 'success')
    throw new Error(`${call.functionName} on ${call.address} reverted (${hash})`);
}

export async function deploySettlementContracts(
  client: Client<Transport, Chain, Account>,
  {
    chainId,
    owner,
    operator,
    paymasterSigner,
    external,
    settlementExternal,
    maxSlippageBps = DEFAULT_MAX_SLIPPAGE_BPS,
    receiveGas = DEFAULT_RECEIVE_GAS,
    composeGas = DEFAULT_COMPOSE_GAS,
  }: DeploySettlementParameters,
): Promise<Record<string, Address>> {
  const network = networkByChainId(chainId);
  if (!network) throw new Error(`chain ${chainId} is not one we settle on`);
  if (client.chain.id !== chainId)
    throw new Error(`the client is on chain ${client.chain.id}, not ${chainId}`);
  const onSettlementChain = network.settlementChainId === chainId;
  const settlementEid = networkByChainId(network.settlementChainId)!.layerZeroEid;
  if (onSettlementChain && !external.susde)
    throw new Error(`chain ${chainId} settles itself and needs susde`);

  const [factory, swapRouter, paymasterV07, paymasterV08] = await Promise.all([
    deployForwarderFactory(client, { owner }),
    deployDeterministic(client, {
      initCode:
        `${UniswapV3SwapAdapter.bytecode}${args(['address', 'address'], [external.uniswapSwapRouter02, owner])}` as Hex,
      salt: saltOf('swapAdapter'),
    }),
    deployPaymaster(client, { version: '0.7', owner, verifyingSigner: paymasterSigner }),
    deployPaymaster(client, { version: '0.8', owner, verifyingSigner: paymasterSigner }),
  ]);

  for (const token of ['usdc', 'usdt'] as const) {
    const fee = external.poolFees[token];
    const current = await readContract(client, {
      address: swapRouter,
      abi: UniswapV3SwapAdapter.abi,
      functionName: 'poolFee',
      args: [external[token], external.usde],
    });
    if (current !== fee)
      await send(client, {
        address: swapRouter,
        abi: UniswapV3SwapAdapter.abi,
        functionName: 'setPoolFee',
        args: [external[token], external.usde, fee],
      } as never);
  }

  const side: Record<string, Address> = {};
  if (onSettlementChain) {
    side.stakingComposer = await deployDeterministic(client, {
      initCode: composerInitCode({ ...external }),
      salt: saltOf('stakingComposer'),
    });
    Object.assign(side, await deployYieldVaultFactory(client));
  } else {
    const messenger = await deployDeterministic(client, {
      initCode:
        `${LayerZeroSettlementMessenger.bytecode}${args(['address', 'address'], [external.usdeOft, owner])}` as Hex,
      salt: saltOf('messenger'),
    });
    const route = await readContract(client, {
      address: messenger,
      abi: LayerZeroSettlementMessenger.abi,
      functionName: 'routeOf',
      args: [BigInt(network.settlementChainId)],
    });
    if (route.eid !== settlementEid || route.receiveGas !== receiveGas || route.composeGas !== composeGas)
      await send(client, {
        address: messenger,
        abi: LayerZeroSettlementMessenger.abi,
        functionName: 'setRoute',
        args: [BigInt(network.settlementChainId), { eid: settlementEid, receiveGas, composeGas }],
      } as never);
    side.messenger = messenger;
  }

  await configureForwarderSettlement(client, {
    forwarderFactory: factory.forwarderFactory,
    settlement: {
      operator,
      swapRouter,
      usde: external.usde,
      stakedUsde: onSettlementChain ? external.susde! : zeroAddress,
      messenger: side.messenger ?? zeroAddress,
      settlementChainId: BigInt(network.settlementChainId),
      settlementComposer: stakingComposerAddress(onSettlementChain ? external : settlementExternal),
      maxSlippageBps,
    },
  });

  const uniswapV3Factory = await readContract(client, {
    address: external.uniswapSwapRouter02,
    abi: IV3SwapRouter.abi,
    functionName: 'factory',
  });
  const { poolFees: _poolFees, ...externalAddresses } = external;
  return {
    ...(externalAddresses as Record<string, Address>),
    uniswapV3Factory,
    ...factory,
    swapRouter,
    paymasterV07,
    paymasterV08,
    ...side,
  };
}
