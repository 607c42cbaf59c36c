import { type Address, erc20Abi, getAddress, maxUint256, parseAbi, zeroAddress } from 'viem';
import { readContract } from 'viem/actions';
import { LocalWETH9 } from '../../contracts/artifacts';
import { deployDeterministic, deterministicDeploymentAddress } from '../../chain/deterministicDeployer';
import { type DeployerClient, initCodeOf, realSaltOf, sendCall } from './contractCalls';
import { NPM_ARTIFACTS } from './npmArtifacts';

/**
 * Uniswap v3 on a local chain, from its official npm bytecode: the factory, the NonfungiblePositionManager that
 * seeds pools, and SwapRouter02 (what production swaps through). Deterministic (CREATE2 through the deterministic
 * deployer), so a restarted dev chain finds them where they were.
 *
 * The factory's constructor enables the 0.05 %, 0.3 % and 1 % tiers; the 0.01 % tier needs its owner, here the
 * CREATE2 proxy, so local stablecoin pools use 0.05 %. The tier is per-pair configuration of the swap adapter.
 */
export const LOCAL_POOL_FEE = 500;
const TICK_SPACING_OF_FEE: Record<number, number> = { 500: 10, 3000: 60, 10000: 200 };
const MAX_TICK = 887272;

export type UniswapV3Addresses = {
  weth9: Address;
  uniswapV3Factory: Address;
  uniswapPositionManager: Address;
  uniswapSwapRouter02: Address;
};

const positionManagerAbi = parseAbi([
  'function createAndInitializePoolIfNecessary(address token0, address token1, uint24 fee, uint160 sqrtPriceX96) payable returns (address pool)',
  'function mint((address token0, address token1, uint24 fee, int24 tickLower, int24 tickUpper, uint256 amount0Desired, uint256 amount1Desired, uint256 amount0Min, uint256 amount1Min, address recipient, uint256 deadline) params) payable returns (uint256 tokenId, uint128 liquidity, uint256 amount0, uint256 amount1)',
]);
const factoryAbi = parseAbi(['function getPool(address, address, uint24) view returns (address)']);
const poolAbi = parseAbi(['function liquidity() view returns (uint128)']);
const mintableAbi = parseAbi(['function mint(address to, uint256 amount)']);

function initCodes() {
  const weth9 = LocalWETH9.bytecode;
  const wethAddress = deterministicDeploymentAddress({ initCode: weth9, salt: realSaltOf('weth9') });
  const factory = NPM_ARTIFACTS.uniswapV3Factory.bytecode;
  const factoryAddress = deterministicDeploymentAddress({
    initCode: factory,
    salt: realSaltOf('uniswapV3Factory'),
  });
  const positionManager = initCodeOf(
    NPM_ARTIFACTS.nonfungiblePositionManager.bytecode,
    ['address', 'address', 'address'],
    [factoryAddress, wethAddress, zeroAddress],
  );
  const positionManagerAddress = deterministicDeploymentAddress({
    initCode: positionManager,
    salt: realSaltOf('uniswapPositionManager'),
  });
  const swapRouter02 = initCodeOf(
    NPM_ARTIFACTS.swapRouter02.bytecode,
    ['address', 'address', 'address', 'address'],
    [zeroAddress, factoryAddress, positionManagerAddress, wethAddress],
  );
  return {
    weth9,
    uniswapV3Factory: factory,
    uniswapPositionManager: positionManager,
    uniswapSwapRouter02: swapRouter02,
  } satisfies Record<keyof UniswapV3Addresses, `0x${string}`>;
}

/** Where the local Uniswap v3 contracts live (the same on every local chain). */
export function localUniswapV3Addresses(): UniswapV3Addresses {
  return Object.fromEntries(
    Object.entries(initCodes()).map(([key, initCode]) => [
      key,
      deterministicDeploymentAddress({ initCode, salt: realSaltOf(key) }),
    ]),
  ) as UniswapV3Addresses;
}

/** Deploys WETH9, the v3 factory, the position manager and SwapRouter02 (skipping those already there). */
export async function deployLocalUniswapV3(client: DeployerClient): Promise<UniswapV3Addresses> {
  const codes = initCodes();
  // Constructors only store their arguments, so nothing has to wait for anything else.
  const deployed = await Promise.all(
    Object.entries(codes).map(async ([key, initCode]) => [
      key,
      await deployDeterministic(client, { initCode, salt: realSaltOf(key) }),
    ]),
  );
  return Object.fromEntries(deployed) as UniswapV3Addresses;
}

/** floor(sqrt(n)) of a non-negative bigint. */
function sqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = n;
  let y = (x + 1n) / 2n;
  while (y < x) {
    x = y;
    y = (x + n / x) / 2n;
  }
  return x;
}

export interface StablePool {
  tokenA: Address;
  decimalsA: number;
  tokenB: Address;
  decimalsB: number;
  /** Whole tokens of each side to provide (both are dollars, so the pool opens at par). */
  depth: bigint;
}

/**
 * Creates the `fee` pool of two mintable dollar tokens at par (one whole token for one whole token) and adds
 * `depth` of each across the full range, unless the pool already holds liquidity. Returns the pool.
 */
export async function seedStablePool(
  client: DeployerClient,
  { uniswapV3Factory, uniswapPositionManager }: UniswapV3Addresses,
  { tokenA, decimalsA, tokenB, decimalsB, depth }: StablePool,
  fee = LOCAL_POOL_FEE,
): Promise<Address> {
  const existing = await readContract(client, {
    address: uniswapV3Factory,
    abi: factoryAbi,
    functionName: 'getPool',
    args: [tokenA, tokenB, fee],
  });
  if (existing !== zeroAddress) {
    const liquidity = await readContract(client, {
      address: existing,
      abi: poolAbi,
      functionName: 'liquidity',
    });
    if (liquidity > 0n) return existing;
  }
  const [token0, decimals0, token1, decimals1] =
    BigInt(tokenA) < BigInt(tokenB)
      ? [tokenA, decimalsA, tokenB, decimalsB]
      : [tokenB, decimalsB, tokenA, decimalsA];
  // Par: price = token1 base units per token0 base unit = 10^decimals1 / 10^decimals0, as sqrt(price) · 2^96.
  const sqrtPriceX96 = sqrt(((10n ** BigInt(decimals1)) << 192n) / 10n ** BigInt(decimals0));
  await sendCall(client, {
    address: uniswapPositionManager,
    abi: positionManagerAbi,
    functionName: 'createAndInitializePoolIfNecessary',
    args: [token0, token1, fee, sqrtPriceX96],
  });
  const amount0 = depth * 10n ** BigInt(decimals0);
  const amount1 = depth * 10n ** BigInt(decimals1);
  const owner = client.account.address;
  await Promise.all(
    [
      [token0, amount0],
      [token1, amount1],
    ].map(async ([token, amount]) => {
      await sendCall(client, {
        address: token as Address,
        abi: mintableAbi,
        functionName: 'mint',
        args: [owner, amount as bigint],
      });
      await sendCall(client, {
        address: token as Address,
        abi: erc20Abi,
        functionName: 'approve',
        args: [uniswapPositionManager, maxUint256],
      });
    }),
  );
  const spacing = TICK_SPACING_OF_FEE[fee]!;
  const fullRange = Math.floor(MAX_TICK / spacing) * spacing;
  await sendCall(client, {
    address: uniswapPositionManager,
    abi: positionManagerAbi,
    functionName: 'mint',
    args: [
      {
        token0,
        token1,
        fee,
        tickLower: -fullRange,
        tickUpper: fullRange,
        amount0Desired: amount0,
        amount1Desired: amount1,
        amount0Min: 0n,
        amount1Min: 0n,
        recipient: owner,
        deadline: maxUint256,
      },
    ],
  });
  return getAddress(
    await readContract(client, {
      address: uniswapV3Factory,
      abi: factoryAbi,
      functionName: 'getPool',
      args: [token0, token1, fee],
    }),
  );
}
