// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/**
 * @title IV3SwapRouter
 * @notice The part of Uniswap's `SwapRouter02` (npm `@uniswap/swap-router-contracts`) the swap adapter calls.
 *         Declared here because the published sources are Solidity 0.7; test/chain/protocolInterfaces.test.ts
 *         checks these selectors against the published artifact's ABI. SwapRouter02's struct has no deadline
 *         (unlike the v3-periphery `SwapRouter`).
 */
interface IV3SwapRouter {
    struct ExactInputSingleParams {
        address tokenIn;
        address tokenOut;
        uint24 fee;
        address recipient;
        uint256 amountIn;
        uint256 amountOutMinimum;
        uint160 sqrtPriceLimitX96;
    }

    /// @notice Swaps `amountIn` of one token for as much as possible of another through one pool.
    function exactInputSingle(ExactInputSingleParams calldata params) external payable returns (uint256 amountOut);

    /// @notice The Uniswap v3 factory the router finds its pools in.
    function factory() external view returns (address);
}

/// @notice The Uniswap v3 factory lookup the deployment checks use.
interface IUniswapV3Factory {
    function getPool(address tokenA, address tokenB, uint24 fee) external view returns (address pool);
}
