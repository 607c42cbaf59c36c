// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/**
 * @title TransferFanout
 * @notice Background stablecoin traffic for the local chains (dev/backgroundTransfers.ts): many real ERC-20
 *         `transfer`s from this contract's own balance in one transaction, so each emits the token's own
 *         Transfer log, exactly as a payment does, without one transaction per log.
 * @dev Anyone may call it: it only moves test tokens it was minted. Never deployed outside local chains.
 */
contract TransferFanout {
    error TransferFailed(address token, address to);

    function transferEach(IERC20 token, address[] calldata recipients, uint256 amount) external {
        for (uint256 i = 0; i < recipients.length; i++) {
            if (!token.transfer(recipients[i], amount)) revert TransferFailed(address(token), recipients[i]);
        }
    }
}
