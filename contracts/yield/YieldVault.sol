// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/**
 * @title YieldVault
 * @notice A merchant-branded ERC-4626 vault whose deposits earn the sUSDe rate: every deposit is staked into
 *         `stakedVault` (sUSDe, an ERC-4626 over this vault's asset) and `totalAssets` is what the vault's sUSDe
 *         redeems for, so the share price rises exactly as sUSDe's does.
 * @dev Hazards and their guards:
 *      - Inflation (first-depositor donation) attack: OpenZeppelin's virtual shares with a 6-decimal offset, so a
 *        donation must be a million times the victim's deposit to round it to zero shares.
 *      - Rounding: OpenZeppelin's directions (deposit and redeem round down, mint and withdraw round up, always
 *        against the caller); `totalAssets` uses sUSDe's `previewRedeem`, which rounds down too.
 *      - Re-entrancy through a token with transfer hooks: every entry point that moves assets is `nonReentrant`,
 *        and shares are burnt before assets leave.
 *      - sUSDe's withdrawal cooldown: while it is on, every `max*` is 0, so `deposit`/`mint` (money that could
 *        not come back out) and `withdraw`/`redeem` revert with ERC4626ExceededMax* (the asynchronous
 *        redemption a cooldown needs is not built here).
 */
contract YieldVault is ERC4626, ReentrancyGuard {
    using SafeERC20 for IERC20;

    uint8 private constant DECIMALS_OFFSET = 6;

    /// @notice The sUSDe vault deposits are staked in.
    IERC4626 public immutable stakedVault;

    constructor(IERC4626 stakedVault_, string memory name_, string memory symbol_)
        ERC20(name_, symbol_)
        ERC4626(IERC20(stakedVault_.asset()))
    {
        stakedVault = stakedVault_;
    }

    /// @notice The assets the vault's sUSDe redeems for now.
    function totalAssets() public view override returns (uint256) {
        return stakedVault.previewRedeem(stakedVault.balanceOf(address(this)));
    }

    /// @notice Nothing while sUSDe's withdrawal cooldown is on: a deposit then could not be withdrawn again.
    function maxDeposit(address receiver) public view override returns (uint256) {
        return cooldownActive() ? 0 : super.maxDeposit(receiver);
    }

    function maxMint(address receiver) public view override returns (uint256) {
        return cooldownActive() ? 0 : super.maxMint(receiver);
    }

    /// @notice At most what the vault's sUSDe position can pay out right now: nothing while sUSDe's withdrawal
    ///         cooldown is on (its ERC-4626 `withdraw` reverts then, so promising funds would be a lie).
    function maxWithdraw(address owner) public view override returns (uint256) {
        if (cooldownActive()) return 0;
        uint256 own = super.maxWithdraw(owner);
        uint256 available = stakedVault.maxWithdraw(address(this));
        return own < available ? own : available;
    }

    function maxRedeem(address owner) public view override returns (uint256) {
        if (cooldownActive()) return 0;
        uint256 own = super.maxRedeem(owner);
        uint256 available = previewWithdraw(stakedVault.maxWithdraw(address(this)));
        return own < available ? own : available;
    }

    /// @notice Whether the staked vault has a withdrawal cooldown on (Ethena's `cooldownDuration() != 0`). A staked
    ///         vault without `cooldownDuration` (a plain ERC-4626) has none.
    function cooldownActive() public view returns (bool) {
        (bool ok, bytes memory data) =
            address(stakedVault).staticcall(abi.encodeWithSignature("cooldownDuration()"));
        return ok && data.length >= 32 && abi.decode(data, (uint256)) != 0;
    }

    function deposit(uint256 assets, address receiver) public override nonReentrant returns (uint256) {
        return super.deposit(assets, receiver);
    }

    function mint(uint256 shares, address receiver) public override nonReentrant returns (uint256) {
        return super.mint(shares, receiver);
    }

    function withdraw(uint256 assets, address receiver, address owner) public override nonReentrant returns (uint256) {
        return super.withdraw(assets, receiver, owner);
    }

    function redeem(uint256 shares, address receiver, address owner) public override nonReentrant returns (uint256) {
        return super.redeem(shares, receiver, owner);
    }

    /// @dev Pulls the assets and mints the shares (OpenZeppelin), then stakes the assets in sUSDe.
    function _deposit(address caller, address receiver, uint256 assets, uint256 shares) internal override {
        super._deposit(caller, receiver, assets, shares);
        IERC20(asset()).forceApprove(address(stakedVault), assets);
        stakedVault.deposit(assets, address(this));
    }

    /// @dev Burns the shares first, then has sUSDe pay the assets straight to the receiver.
    function _withdraw(address caller, address receiver, address owner, uint256 assets, uint256 shares)
        internal
        override
    {
        if (caller != owner) _spendAllowance(owner, caller, shares);
        _burn(owner, shares);
        stakedVault.withdraw(assets, receiver, address(this));
        emit Withdraw(caller, receiver, owner, assets, shares);
    }

    function _decimalsOffset() internal pure override returns (uint8) {
        return DECIMALS_OFFSET;
    }
}
