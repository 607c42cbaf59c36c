// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/**
 * @title ISwapRouter
 * @notice The swap adapter a {Forwarder} sells deposited stablecoins through. Production points the
 *         factory's settlement at an adapter over a real venue; local chains use `LocalSwapRouter`.
 * @dev An implementation pulls exactly `amountIn` of `tokenIn` from the caller with `transferFrom`,
 *      delivers at least `minAmountOut` of `tokenOut` to `recipient` or reverts, and returns what it delivered.
 */
interface ISwapRouter {
    /// @notice The swap would deliver `amountOut`, below the caller's `minAmountOut`.
    error InsufficientOutput(uint256 amountOut, uint256 minAmountOut);

    function swapExactIn(
        address tokenIn,
        address tokenOut,
        uint256 amountIn,
        uint256 minAmountOut,
        address recipient
    ) external returns (uint256 amountOut);
}
