// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * @title LocalWETH9
 * @notice Wrapped ether for the local Uniswap v3 deployment (its router and position manager take a WETH9 in their
 *         constructors); settlement never swaps through it. Never deployed outside local chains.
 */
contract LocalWETH9 is ERC20 {
    constructor() ERC20("Wrapped Ether (local)", "WETH") {}

    receive() external payable {
        deposit();
    }

    function deposit() public payable {
        _mint(msg.sender, msg.value);
    }

    function withdraw(uint256 amount) external {
        _burn(msg.sender, amount);
        (bool sent, ) = msg.sender.call{value: amount}("");
        require(sent, "WETH: send failed");
    }
}
