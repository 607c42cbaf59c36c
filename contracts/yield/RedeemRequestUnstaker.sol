// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IStakedUSDe} from "../interfaces/external/IStakedUSDe.sol";

/**
 * @title RedeemRequestUnstaker
 * @notice Holds the sUSDe of exactly one ERC-7540 redeem request of a {YieldVault} through sUSDe's cooldown.
 *         sUSDe keeps one cooldown per address and restarts it on every new `cooldown*` call, so the vault gives
 *         every request its own address: a minimal clone (EIP-1167) of one implementation the vault deploys. The
 *         clone runs the implementation's code, immutables included, so every clone answers only to that vault.
 */
contract RedeemRequestUnstaker {
    using SafeERC20 for IERC20;

    /// @notice The vault whose requests this unstaker serves (the deployer of the implementation).
    address public immutable vault;
    IStakedUSDe public immutable stakedVault;
    IERC20 public immutable asset;

    error OnlyVault();

    constructor(IStakedUSDe stakedVault_) {
        vault = msg.sender;
        stakedVault = stakedVault_;
        asset = IERC20(stakedVault_.asset());
    }

    modifier onlyVault() {
        if (msg.sender != vault) revert OnlyVault();
        _;
    }

    /// @notice Starts this address's cooldown for exactly `assets` of the sUSDe the vault sent here (Ethena's
    ///         one-argument `cooldownAssets`: the caller's own sUSDe into the caller's cooldown).
    function startCooldown(uint256 assets) external onlyVault {
        stakedVault.cooldownAssets(assets);
    }

    /// @notice When this request's cooldown ends (0 once unstaked).
    function cooldownEnd() external view returns (uint256 end) {
        (end,) = stakedVault.cooldowns(address(this));
    }

    /// @notice Pays `amount` of the request's assets to `receiver`, unstaking them from sUSDe's silo first.
    function pay(address receiver, uint256 amount) external onlyVault {
        (, uint256 cooling) = stakedVault.cooldowns(address(this));
        if (cooling != 0) stakedVault.unstake(address(this));
        asset.safeTransfer(receiver, amount);
    }
}
