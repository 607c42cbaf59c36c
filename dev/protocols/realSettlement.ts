import { type Address, erc20Abi, parseUnits, zeroAddress } from 'viem';
import { readContract } from 'viem/actions';
import {
  LayerZeroSettlementMessenger,
  LayerZeroStakingComposer,
  LocalStakedUSDeV2,
  LocalUSDeOFT,
  LocalUSDeOFTAdapter,
  UniswapV3SwapAdapter,
} from '../../contracts/artifacts';
import { deployDeterministic, deterministicDeploymentAddress } from '../../chain/deterministicDeployer';
import { type ForwarderSettlement } from '../../chain/forwarderFactory';
import { addressToBytes32, oappAbi } from '../../chain/layerZero';
import { LOCAL_MAX_SLIPPAGE_BPS } from '../chains/localSettlement';
import { STABLECOINS } from '../../chain/stablecoins';
import type { LocalStablecoinAddresses } from '../chains/localStablecoins';
import { NETWORKS, networkByChainId } from '../../config/networks';
import { type DeployerClient, initCodeOf, realSaltOf, sendCall } from './contractCalls';
import { deployLocalEndpoint, localEndpointAddress, wireLocalMessageLib } from './layerZero';
import {
  LOCAL_POOL_FEE,
  type UniswapV3Addresses,
  deployLocalUniswapV3,
  localUniswapV3Addresses,
  seedStablePool,
} from './uniswapV3';

/**
 * The real-protocol settlement set of a local chain: Uniswap v3 with seeded USDC/USDe and USDT/USDe pools and
 * our SwapRouter02 adapter; LayerZero's EndpointV2 with USDe as an OFT (a lockbox OFT adapter over USDe on the
 * settlement chain, a mint/burn OFT on layer-2s, as Ethena deploys it) peered across the chains of one class; on
 * the settlement chain an Ethena-like sUSDe and our lzCompose staking composer; on layer-2s our OFT messenger.
 * Every address is derived from (chain, owner), so each chain can peer with the others before they exist.
 */

export type RealSettlementAddresses = UniswapV3Addresses & {
  /** The UniswapV3SwapAdapter the forwarders swap through. */
  swapRouter: Address;
  layerZeroEndpoint: Address;
  layerZeroMessageLib: Address;
  /** The USDe OFT: the lockbox adapter on the settlement chain, USDe itself on a layer-2. */
  usdeOft: Address;
  /** USDe: the local mintable USDe on the settlement chain, the OFT on a layer-2. */
  usde: Address;
  /** Settlement chain only: the Ethena-like sUSDe and the LayerZeroStakingComposer. */
  susde?: Address;
  stakingComposer?: Address;
  /** Layer-2 only: the LayerZeroSettlementMessenger. */
  messenger?: Address;
};

export interface RealSettlementIdentity {
  chainId: number;
  /** Deploys and owns everything (the deployer's address). */
  owner: Address;
  /** May verify packets on the message library (the dev relayer's key). */
  relayer: Address;
  settlementChainId: number;
  operator: Address;
}

/** Executor gas the messenger asks for on the settlement chain (ample for an OFT credit and an ERC-4626 deposit). */
export const LOCAL_RECEIVE_GAS = 200_000n;
export const LOCAL_COMPOSE_GAS = 500_000n;
/** USDe locked in the settlement chain's adapter, backing what the layer-2 OFTs may ever bring home. */
const ADAPTER_BACKING = parseUnits('1000000000', 18);
const POOL_DEPTH = 10_000_000n;

function eidOf(chainId: number): number {
  const network = networkByChainId(chainId);
  if (!network) throw new Error(`chain ${chainId} is not a known network`);
  return network.layerZeroEid;
}

/** The chains a chain's OFT peers with: a settlement chain with its layer-2s, a layer-2 with its settlement chain. */
function partnerChainIds(chainId: number, settlementChainId: number): number[] {
  if (chainId !== settlementChainId) return [settlementChainId];
  return NETWORKS.filter(
    (network) => network.settlementChainId === chainId && network.chainId !== chainId,
  ).map((network) => network.chainId);
}

const localUsde = (stablecoins: Pick<LocalStablecoinAddresses, 'usde'>) => stablecoins.usde;

function initCodes(chainId: number, settlementChainId: number, owner: Address, stablecoinUsde: Address) {
  const endpoint = localEndpointAddress({ eid: eidOf(chainId), owner });
  const onSettlementChain = chainId === settlementChainId;
  const oft = onSettlementChain
    ? initCodeOf(
        LocalUSDeOFTAdapter.bytecode,
        ['address', 'address', 'address'],
        [stablecoinUsde, endpoint, owner],
      )
    : initCodeOf(LocalUSDeOFT.bytecode, ['address', 'address'], [endpoint, owner]);
  const oftAddress = deterministicDeploymentAddress({ initCode: oft, salt: realSaltOf('usdeOft') });
  const usde = onSettlementChain ? stablecoinUsde : oftAddress;
  const susde = initCodeOf(LocalStakedUSDeV2.bytecode, ['address', 'address'], [usde, owner]);
  const susdeAddress = deterministicDeploymentAddress({ initCode: susde, salt: realSaltOf('susde') });
  const { uniswapSwapRouter02 } = localUniswapV3Addresses();
  return {
    endpoint,
    usde,
    oft,
    swapAdapter: initCodeOf(
      UniswapV3SwapAdapter.bytecode,
      ['address', 'address'],
      [uniswapSwapRouter02, owner],
    ),
    susde,
    composer: initCodeOf(
      LayerZeroStakingComposer.bytecode,
      ['address', 'address', 'address'],
      [endpoint, oftAddress, susdeAddress],
    ),
    messenger: initCodeOf(LayerZeroSettlementMessenger.bytecode, ['address', 'address'], [oftAddress, owner]),
  };
}

const at = (initCode: `0x${string}`, name: string) =>
  deterministicDeploymentAddress({ initCode, salt: realSaltOf(name) });

/** The USDe OFT and (on a settlement chain) the composer of `chainId`, without touching the chain. */
export function realSettlementPeerAddresses({
  chainId,
  settlementChainId,
  owner,
  stablecoinUsde,
}: {
  chainId: number;
  settlementChainId: number;
  owner: Address;
  stablecoinUsde: Address;
}): { usdeOft: Address; stakingComposer: Address } {
  const codes = initCodes(chainId, settlementChainId, owner, stablecoinUsde);
  return { usdeOft: at(codes.oft, 'usdeOft'), stakingComposer: at(codes.composer, 'stakingComposer') };
}

/**
 * Deploys and wires the real-protocol set on one chain (skipping what is there) and returns its addresses
 * together with the forwarder factory's settlement configuration for it. The stablecoins must exist.
 */
export async function deployRealSettlement(
  client: DeployerClient,
  identity: RealSettlementIdentity,
  stablecoins: LocalStablecoinAddresses,
): Promise<{ addresses: RealSettlementAddresses; settlement: ForwarderSettlement }> {
  const { chainId, owner, relayer, settlementChainId, operator } = identity;
  const onSettlementChain = chainId === settlementChainId;
  const codes = initCodes(chainId, settlementChainId, owner, localUsde(stablecoins));
  const partners = partnerChainIds(chainId, settlementChainId);

  const [uniswap, endpoint] = await Promise.all([
    deployLocalUniswapV3(client),
    deployLocalEndpoint(client, { eid: eidOf(chainId), owner }),
  ]);
  // The OFT's constructor registers its delegate with the endpoint; the adapter's reads USDe's decimals.
  const [layerZeroMessageLib, usdeOft, swapRouter] = await Promise.all([
    wireLocalMessageLib(client, { endpoint, remoteEids: partners.map(eidOf), verifier: relayer }),
    deployDeterministic(client, { initCode: codes.oft, salt: realSaltOf('usdeOft') }),
    deployDeterministic(client, { initCode: codes.swapAdapter, salt: realSaltOf('swapAdapter') }),
  ]);
  const usde = codes.usde;

  const peers = partners.map((partner) => ({
    eid: eidOf(partner),
    peer: realSettlementPeerAddresses({
      chainId: partner,
      settlementChainId,
      owner,
      stablecoinUsde: localUsde(stablecoins),
    }).usdeOft,
  }));
  const usdeDecimals = STABLECOINS.find((token) => token.contractKey === 'usde')!.decimals;
  const payable = STABLECOINS.filter((token) => token.contractKey !== 'usde');

  const wireOft = async () => {
    for (const { eid, peer } of peers) {
      const current = await readContract(client, {
        address: usdeOft,
        abi: oappAbi,
        functionName: 'peers',
        args: [eid],
      });
      if (current !== addressToBytes32(peer))
        await sendCall(client, {
          address: usdeOft,
          abi: oappAbi,
          functionName: 'setPeer',
          args: [eid, addressToBytes32(peer)],
        });
    }
  };
  const seedPools = async () => {
    for (const token of payable) {
      await seedStablePool(client, uniswap, {
        tokenA: stablecoins[token.contractKey],
        decimalsA: token.decimals,
        tokenB: usde,
        decimalsB: usdeDecimals,
        depth: POOL_DEPTH,
      });
      const fee = await readContract(client, {
        address: swapRouter,
        abi: UniswapV3SwapAdapter.abi,
        functionName: 'poolFee',
        args: [stablecoins[token.contractKey], usde],
      });
      if (fee !== LOCAL_POOL_FEE)
        await sendCall(client, {
          address: swapRouter,
          abi: UniswapV3SwapAdapter.abi,
          functionName: 'setPoolFee',
          args: [stablecoins[token.contractKey], usde, LOCAL_POOL_FEE],
        });
    }
  };
  const settlementSide = async (): Promise<Partial<RealSettlementAddresses>> => {
    if (onSettlementChain) {
      const susde = await deployDeterministic(client, { initCode: codes.susde, salt: realSaltOf('susde') });
      const stakingComposer = await deployDeterministic(client, {
        initCode: codes.composer,
        salt: realSaltOf('stakingComposer'),
      });
      await seedVault(client, { usde, susde });
      const locked = await readContract(client, {
        address: usde,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [usdeOft],
      });
      if (locked === 0n)
        await sendCall(client, {
          address: usde,
          abi: LocalUSDeOFT.abi,
          functionName: 'mint',
          args: [usdeOft, ADAPTER_BACKING],
        });
      return { susde, stakingComposer };
    }
    const messenger = await deployDeterministic(client, {
      initCode: codes.messenger,
      salt: realSaltOf('messenger'),
    });
    const route = await readContract(client, {
      address: messenger,
      abi: LayerZeroSettlementMessenger.abi,
      functionName: 'routeOf',
      args: [BigInt(settlementChainId)],
    });
    if (route.eid !== eidOf(settlementChainId) || route.composeGas !== LOCAL_COMPOSE_GAS)
      await sendCall(client, {
        address: messenger,
        abi: LayerZeroSettlementMessenger.abi,
        functionName: 'setRoute',
        args: [
          BigInt(settlementChainId),
          { eid: eidOf(settlementChainId), receiveGas: LOCAL_RECEIVE_GAS, composeGas: LOCAL_COMPOSE_GAS },
        ],
      });
    return { messenger };
  };
  // Pools and vault both move the deployer's USDe, so they go one after the other (a gas estimate made while the
  // other changes those balances can fall short).
  const [, side] = await Promise.all([wireOft(), seedPools().then(settlementSide)]);

  const { stakingComposer: settlementComposer } = realSettlementPeerAddresses({
    chainId: settlementChainId,
    settlementChainId,
    owner,
    stablecoinUsde: localUsde(stablecoins),
  });
  return {
    addresses: {
      ...uniswap,
      swapRouter,
      layerZeroEndpoint: endpoint,
      layerZeroMessageLib,
      usdeOft,
      usde,
      ...side,
    },
    settlement: {
      operator,
      swapRouter,
      usde,
      stakedUsde: side.susde ?? zeroAddress,
      messenger: side.messenger ?? zeroAddress,
      settlementChainId: BigInt(settlementChainId),
      settlementComposer,
      maxSlippageBps: LOCAL_MAX_SLIPPAGE_BPS,
    },
  };
}

/**
 * A first staker (sUSDe refuses to leave fewer than 1e18 shares in existence) and yield on top, so one share is
 * worth more than one USDe and `previewDeposit` is not the identity.
 */
async function seedVault(
  client: DeployerClient,
  { usde, susde }: { usde: Address; susde: Address },
): Promise<void> {
  const supply = await readContract(client, { address: susde, abi: erc20Abi, functionName: 'totalSupply' });
  if (supply > 0n) return;
  const stake = parseUnits('1000', 18);
  const owner = client.account.address;
  await sendCall(client, {
    address: usde,
    abi: LocalUSDeOFT.abi,
    functionName: 'mint',
    args: [owner, stake + parseUnits('37.5', 18)],
  });
  await sendCall(client, { address: usde, abi: erc20Abi, functionName: 'approve', args: [susde, stake] });
  await sendCall(client, {
    address: susde,
    abi: LocalStakedUSDeV2.abi,
    functionName: 'deposit',
    args: [stake, owner],
  });
  await sendCall(client, {
    address: usde,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [susde, parseUnits('37.5', 18)],
  });
}
