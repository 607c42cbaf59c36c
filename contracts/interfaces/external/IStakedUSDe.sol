// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";

/**
 * @title IStakedUSDe
 * @notice Ethena's sUSDe (`StakedUSDeV2`) as far as settlement relies on it, with the signatures of its published
 *         ABI. It is an ERC-4626 vault over USDe: staking is the standard `deposit(assets, receiver)`. Only leaving
 *         is special: while `cooldownDuration` is non-zero, ERC-4626 `withdraw`/`redeem` revert and a holder
 *         calls `cooldownShares`/`cooldownAssets`, then `unstake` once the cooldown has passed. Deposits revert
 *         when the caller or receiver is soft-restricted (`OperationNotAllowed`), or when they would leave fewer
 *         than 1e18 shares in existence (`MinSharesViolation`).
 */
interface IStakedUSDe is IERC4626 {
    /// @notice Seconds between a cooldown request and `unstake`; zero makes the vault a plain ERC-4626.
    function cooldownDuration() external view returns (uint24);

    /// @notice The pending cooldown of `owner`: when it ends and how much USDe it releases.
    function cooldowns(address owner) external view returns (uint104 cooldownEnd, uint152 underlyingAmount);

    /// @notice Ethena's published `StakedUSDeV2` (github.com/ethena-labs/bbp-public-assets): the caller's own
    ///         sUSDe goes into the caller's cooldown. The yield vault's per-request unstakers call these.
    function cooldownShares(uint256 shares) external returns (uint256 assets);

    function cooldownAssets(uint256 assets) external returns (uint256 shares);

    /// @notice The audited variant with an owner argument (kept for the local set; not on Ethena's mainnet sUSDe).
    function cooldownShares(uint256 shares, address owner) external returns (uint256 assets);

    function cooldownAssets(uint256 assets, address owner) external returns (uint256 shares);

    function unstake(address receiver) external;

    /// @notice Yield not yet vested into the share price (excluded from `totalAssets`).
    function getUnvestedAmount() external view returns (uint256);
}
