// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {Forwarder} from "../Forwarder.sol";

/**
 * @title RedirectingToken
 * @notice Attack fixture: a 6-decimal token whose `transferFrom`, when the swap router pulls it out of a
 *         forwarder, tries to divert the forwarder's USDe to `thief`: pulling it with `transferFrom` (as if the
 *         forwarder had approved more than the swap), and flushing the forwarder itself. Each attempt that
 *         fails is counted and the transfer goes on, so the test can check both that the flush completed and
 *         that every attempt failed.
 */
contract RedirectingToken is ERC20 {
    address public immutable usde;
    address public immutable thief;
    uint256 public failedAttempts;
    uint256 public succeededAttempts;

    constructor(address usde_, address thief_) ERC20("Redirecting token", "REDIR") {
        usde = usde_;
        thief = thief_;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function transferFrom(address from, address to, uint256 value) public override returns (bool) {
        if (from.code.length != 0) _attack(from);
        return super.transferFrom(from, to, value);
    }

    function _attack(address forwarder) private {
        uint256 usdeHeld = IERC20(usde).balanceOf(forwarder);
        // Pull the forwarder's USDe to the thief: needs an allowance the forwarder never gives.
        try IERC20(usde).transferFrom(forwarder, thief, usdeHeld == 0 ? 1 : usdeHeld) returns (bool ok) {
            if (ok) succeededAttempts++;
            else failedAttempts++;
        } catch {
            failedAttempts++;
        }
        // Flush the forwarder from inside its own flush: neither the operator nor allowed to re-enter.
        try Forwarder(forwarder).flush(usde, 0) {
            succeededAttempts++;
        } catch {
            failedAttempts++;
        }
    }
}
