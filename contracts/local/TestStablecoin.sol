// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * @title TestStablecoin
 * @notice Local stand-in for USDC, USDT (6 decimals) and USDe (18 decimals) on the dev and test chains.
 * @dev Anyone may mint: the dev stack advertises this so a session can be paid by hand or from a script.
 *      Never deployed outside local chains; production token addresses are configuration.
 */
contract TestStablecoin is ERC20 {
    uint8 private immutable _decimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) ERC20(name_, symbol_) {
        _decimals = decimals_;
    }

    function decimals() public view override returns (uint8) {
        return _decimals;
    }

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
