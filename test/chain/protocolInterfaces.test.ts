import endpointV2 from '@layerzerolabs/lz-evm-protocol-v2/artifacts/contracts/EndpointV2.sol/EndpointV2.json';
import swapRouter02 from '@uniswap/swap-router-contracts/artifacts/contracts/SwapRouter02.sol/SwapRouter02.json';
import uniswapV3Factory from '@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json';
import { type Abi, type AbiEvent, type AbiFunction, toEventSelector, toFunctionSelector } from 'viem';
import { layerZeroEndpointAbi, oappAbi } from '../../chain/layerZero';
import { IUniswapV3Factory, IV3SwapRouter, LocalStakedUSDeV2, LocalUSDeOFT } from '../../contracts/artifacts';

/**
 * The interfaces our contracts and the worker use to talk to the protocols are the protocols' own: every function
 * and event we declare by hand has its selector in the ABI the protocol publishes on npm.
 */
const functions = (abi: Abi) =>
  new Set(
    abi
      .filter((item): item is AbiFunction => item.type === 'function')
      .map((item) => toFunctionSelector(item)),
  );
const events = (abi: Abi) =>
  new Set(abi.filter((item): item is AbiEvent => item.type === 'event').map((item) => toEventSelector(item)));

function expectDeclaredIn(declared: Abi, published: Abi) {
  const publishedFunctions = functions(published);
  const publishedEvents = events(published);
  for (const item of declared) {
    if (item.type === 'function')
      expect({ [item.name]: publishedFunctions.has(toFunctionSelector(item)) }).toEqual({
        [item.name]: true,
      });
    if (item.type === 'event')
      expect({ [item.name]: publishedEvents.has(toEventSelector(item)) }).toEqual({ [item.name]: true });
  }
}

describe('protocol interfaces against the published ABIs', () => {
  it('the swap adapter calls SwapRouter02 (exactInputSingle without deadline) as @uniswap/swap-router-contracts publishes it', () => {
    expectDeclaredIn(IV3SwapRouter.abi, swapRouter02.abi as Abi);
    expect(
      functions(swapRouter02.abi as Abi).has(
        toFunctionSelector(IV3SwapRouter.abi.find((item) => item.name === 'exactInputSingle') as AbiFunction),
      ),
    ).toBe(true);
  });

  it('the pool lookup is the v3 factory’s getPool from @uniswap/v3-core', () => {
    expectDeclaredIn(IUniswapV3Factory.abi, uniswapV3Factory.abi as Abi);
  });

  it('the worker and relayer speak EndpointV2 as @layerzerolabs/lz-evm-protocol-v2 publishes it', () => {
    expectDeclaredIn(layerZeroEndpointAbi, endpointV2.abi as Abi);
  });

  it('OApp reads (endpoint, peers, token, setPeer) are those of the reference OFT from @layerzerolabs/oft-evm', () => {
    expectDeclaredIn(oappAbi, LocalUSDeOFT.abi);
  });

  it('sUSDe is staked through the standard ERC-4626 deposit(assets, receiver) and priced with previewDeposit', () => {
    const selectors = functions(LocalStakedUSDeV2.abi);
    expect(selectors.has(toFunctionSelector('function deposit(uint256 assets, address receiver)'))).toBe(
      true,
    );
    expect(selectors.has(toFunctionSelector('function previewDeposit(uint256 assets)'))).toBe(true);
    // Ethena's cooldown path (published ABI signatures): leaving is special, staking is not.
    for (const signature of [
      'function cooldownShares(uint256 shares)',
      'function cooldownAssets(uint256 assets)',
      'function cooldownShares(uint256 shares, address owner)',
      'function cooldownAssets(uint256 assets, address owner)',
      'function unstake(address receiver)',
      'function cooldownDuration()',
    ])
      expect({ [signature]: selectors.has(toFunctionSelector(signature)) }).toEqual({ [signature]: true });
  });
});
