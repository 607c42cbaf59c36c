// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ISwapRouter} from "../interfaces/ISwapRouter.sol";
import {IV3SwapRouter} from "../interfaces/external/IV3SwapRouter.sol";

/**
 * @title UniswapV3SwapAdapter
 * @notice The {ISwapRouter} a {Forwarder} sells USDC/USDT for USDe through, over Uniswap v3's `SwapRouter02`:
 *         one `exactInputSingle` through the pool of the pair's configured fee tier.
 * @dev The minimum is the venue's own `amountOutMinimum` (the forwarder passes the larger of the operator's quote
 *      and its par floor), so a swap below it reverts inside Uniswap ("Too little received") and nothing moves.
 *      The adapter holds nothing between calls: it pulls exactly `amountIn`, approves the router for exactly
 *      that, and the router pays `recipient` directly. Which pool (fee tier) serves a pair is the owner's
 *      choice, per chain, since liquidity differs per chain; a pair without one is refused.
 */
contract UniswapV3SwapAdapter is ISwapRouter, Ownable2Step {
    using SafeERC20 for IERC20;

    /// @notice Uniswap's SwapRouter02 on this chain.
    IV3SwapRouter public immutable router;

    /// @notice The Uniswap v3 fee tier (in hundredths of a basis point) of the pool that swaps the pair; 0 = none.
    mapping(address tokenIn => mapping(address tokenOut => uint24 fee)) public poolFee;

    event PoolFeeSet(address indexed tokenIn, address indexed tokenOut, uint24 fee);

    /// @notice No pool is configured for this pair.
    error UnsupportedPair();

    constructor(IV3SwapRouter router_, address owner_) Ownable(owner_) {
        router = router_;
    }

    /// @notice Routes `tokenIn` → `tokenOut` through the pool of fee tier `fee`; 0 removes the pair.
    function setPoolFee(address tokenIn, address tokenOut, uint24 fee) external onlyOwner {
        poolFee[tokenIn][tokenOut] = fee;
        emit PoolFeeSet(tokenIn, tokenOut, fee);
    }

    /// @inheritdoc ISwapRouter
    function swapExactIn(
        address tokenIn,
        address tokenOut,
        uint256 amountIn,
        uint256 minAmountOut,
        address recipient
    ) external returns (uint256 amountOut) {
        uint24 fee = poolFee[tokenIn][tokenOut];
        if (fee == 0) revert UnsupportedPair();
        IERC20(tokenIn).safeTransferFrom(msg.sender, address(this), amountIn);
        IERC20(tokenIn).forceApprove(address(router), amountIn);
        amountOut = router.exactInputSingle(
            IV3SwapRouter.ExactInputSingleParams({
                tokenIn: tokenIn,
                tokenOut: tokenOut,
                fee: fee,
                recipient: recipient,
                amountIn: amountIn,
                amountOutMinimum: minAmountOut,
                sqrtPriceLimitX96: 0
            })
        );
        // An exact-input swap spends the whole approval; make sure nothing is left to spend later.
        if (IERC20(tokenIn).allowance(address(this), address(router)) != 0) {
            IERC20(tokenIn).forceApprove(address(router), 0);
        }
    }
}
