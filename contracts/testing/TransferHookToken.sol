// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * @title TransferHookToken
 * @notice Attack fixture: an 18-decimal token with an ERC-777-style hook. Once armed, its next `transferFrom`
 *         first calls `target` with `data` (as the token) and bubbles any revert, so a contract that pulls it is
 *         re-entered mid-transfer.
 */
contract TransferHookToken is ERC20 {
    address public hookTarget;
    bytes private _hookData;

    constructor() ERC20("Transfer hook token", "HOOK") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function arm(address target, bytes calldata data) external {
        hookTarget = target;
        _hookData = data;
    }

    function transferFrom(address from, address to, uint256 value) public override returns (bool) {
        address target = hookTarget;
        if (target != address(0)) {
            hookTarget = address(0);
            (bool ok, bytes memory result) = target.call(_hookData);
            if (!ok) {
                assembly {
                    revert(add(result, 32), mload(result))
                }
            }
        }
        return super.transferFrom(from, to, value);
    }
}
