// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {ISwapRouter} from "../interfaces/ISwapRouter.sol";
import {TestStablecoin} from "./TestStablecoin.sol";

/**
 * @title LocalSwapRouter
 * @notice Local stand-in for a swap venue: swaps at a rate the owner sets per pair and enforces `minAmountOut`.
 * @dev amountOut = amountIn * rateE18 / 1e18 in base units, so the rate carries the decimal difference
 *      (USDC with 6 decimals to USDe with 18 at par is 1e30). It pulls `tokenIn` and mints `tokenOut`
 *      (a {TestStablecoin}) to the recipient, standing in for a venue with unlimited liquidity.
 *      Never deployed outside local chains.
 */
contract LocalSwapRouter is ISwapRouter, Ownable {
    using SafeERC20 for IERC20;

    /// @notice Base units of `tokenOut` per 1e18 base units of `tokenIn`; zero for a pair the router does not swap.
    mapping(address tokenIn => mapping(address tokenOut => uint256 rateE18)) public rate;

    event RateSet(address indexed tokenIn, address indexed tokenOut, uint256 rateE18);
    event Swapped(
        address indexed sender,
        address indexed tokenIn,
        address indexed tokenOut,
        uint256 amountIn,
        uint256 amountOut,
        address recipient
    );

    /// @notice No rate is set for this pair.
    error UnsupportedPair();

    constructor(address owner_) Ownable(owner_) {}

    /// @notice Sets the rate of a pair; zero removes the pair.
    function setRate(address tokenIn, address tokenOut, uint256 rateE18) external onlyOwner {
        rate[tokenIn][tokenOut] = rateE18;
        emit RateSet(tokenIn, tokenOut, rateE18);
    }

    /// @inheritdoc ISwapRouter
    function swapExactIn(
        address tokenIn,
        address tokenOut,
        uint256 amountIn,
        uint256 minAmountOut,
        address recipient
    ) external returns (uint256 amountOut) {
        uint256 rateE18 = rate[tokenIn][tokenOut];
        if (rateE18 == 0) revert UnsupportedPair();
        amountOut = Math.mulDiv(amountIn, rateE18, 1e18);
        if (amountOut < minAmountOut) revert InsufficientOutput(amountOut, minAmountOut);
        IERC20(tokenIn).safeTransferFrom(msg.sender, address(this), amountIn);
        TestStablecoin(tokenOut).mint(recipient, amountOut);
        emit Swapped(msg.sender, tokenIn, tokenOut, amountIn, amountOut, recipient);
    }
}
