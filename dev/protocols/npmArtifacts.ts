import endpointV2 from '@layerzerolabs/lz-evm-protocol-v2/artifacts/contracts/EndpointV2.sol/EndpointV2.json';
import simpleMessageLib from '@layerzerolabs/lz-evm-protocol-v2/artifacts/contracts/messagelib/SimpleMessageLib.sol/SimpleMessageLib.json';
import swapRouter02 from '@uniswap/swap-router-contracts/artifacts/contracts/SwapRouter02.sol/SwapRouter02.json';
import uniswapV3Factory from '@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json';
import positionManager from '@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json';
import { type Abi, type Hex, isHex } from 'viem';

/**
 * The protocols' own compiled contracts, exactly as their npm packages publish them: Uniswap v3's factory
 * (@uniswap/v3-core), position manager (@uniswap/v3-periphery) and SwapRouter02 (@uniswap/swap-router-contracts),
 * LayerZero's EndpointV2 and SimpleMessageLib (@layerzerolabs/lz-evm-protocol-v2). Deployed byte for byte, so
 * the pool init code hash the routers compute matches the pools the factory creates.
 */
export interface NpmArtifact {
  contractName: string;
  abi: Abi;
  bytecode: Hex;
}

function artifact(json: { contractName: string; abi: unknown; bytecode: string }): NpmArtifact {
  if (!isHex(json.bytecode) || json.bytecode.length <= 2)
    throw new Error(`the npm artifact of ${json.contractName} carries no bytecode`);
  return { contractName: json.contractName, abi: json.abi as Abi, bytecode: json.bytecode };
}

export const NPM_ARTIFACTS = {
  uniswapV3Factory: artifact(uniswapV3Factory),
  nonfungiblePositionManager: artifact(positionManager),
  swapRouter02: artifact(swapRouter02),
  endpointV2: artifact(endpointV2),
  simpleMessageLib: artifact(simpleMessageLib),
} as const;
