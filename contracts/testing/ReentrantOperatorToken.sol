// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Forwarder} from "../Forwarder.sol";

/**
 * @title ReentrantOperatorToken
 * @notice Attack fixture: a 6-decimal token that is also the forwarder's settlement operator, so a flush it
 *         re-enters from inside the swap (when the router pulls it with `transferFrom`) passes the operator
 *         check and meets the reentrancy guard alone.
 */
contract ReentrantOperatorToken is ERC20 {
    address public reenterForwarder;
    address public reenterToken;

    constructor() ERC20("Reentrant operator token", "REOP") {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice Arms the hook: the next `transferFrom` calls `forwarder.flush(token, 0)` first.
    function arm(address forwarder, address token) external {
        reenterForwarder = forwarder;
        reenterToken = token;
    }

    /// @notice Flushes `forwarder` as the operator (this contract is the configured operator).
    function flushAsOperator(address forwarder, address token, uint256 minUsdeOut) external returns (uint256) {
        return Forwarder(forwarder).flush(token, minUsdeOut);
    }

    function transferFrom(address from, address to, uint256 value) public override returns (bool) {
        address forwarder = reenterForwarder;
        if (forwarder != address(0)) {
            reenterForwarder = address(0);
            // Bubbles the guard's revert, so the whole flush fails and the test sees why.
            Forwarder(forwarder).flush(reenterToken, 0);
        }
        return super.transferFrom(from, to, value);
    }
}
