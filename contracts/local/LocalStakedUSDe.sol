// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";

/**
 * @title LocalStakedUSDe
 * @notice Local stand-in for Ethena's sUSDe: a plain ERC-4626 vault over the local USDe. Yield is simulated by
 *         sending USDe to the vault, which raises the share price. Never deployed outside local chains.
 */
contract LocalStakedUSDe is ERC4626 {
    constructor(IERC20 usde) ERC20("Staked USDe (local)", "sUSDe") ERC4626(usde) {}
}
