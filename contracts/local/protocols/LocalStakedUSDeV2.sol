// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IStakedUSDe} from "../../interfaces/external/IStakedUSDe.sol";

/**
 * @title LocalStakedUSDeV2
 * @notice sUSDe of the local real-protocol set, written to behave as Ethena's `StakedUSDeV2` does where settlement
 *         meets it (Ethena publishes no npm package to deploy from): an ERC-4626 vault over USDe with the cooldown
 *         on withdrawal only (ERC-4626 `withdraw`/`redeem` revert while `cooldownDuration` is set; `cooldownShares`
 *         or `cooldownAssets` move the assets to a silo and `unstake` pays them after the cooldown), deposits
 *         refused for soft-restricted callers or receivers, the 1e18 minimum total supply, and rewards that vest
 *         over 8 hours. It implements {IStakedUSDe}, the signatures of Ethena's published ABI, so the compiler holds
 *         the two together. Never deployed outside local chains.
 */
contract LocalStakedUSDeV2 is ERC4626, Ownable, IStakedUSDe {
    using SafeERC20 for IERC20;

    uint256 private constant VESTING_PERIOD = 8 hours;
    uint256 private constant MIN_SHARES = 1 ether;
    uint24 public constant MAX_COOLDOWN_DURATION = 90 days;

    uint24 public cooldownDuration;
    uint256 public vestingAmount;
    uint256 public lastDistributionTimestamp;
    /// @notice Holds the assets of pending cooldowns.
    CooldownSilo public immutable silo;

    mapping(address => bool) public softRestricted;
    mapping(address => UserCooldown) private _cooldowns;

    struct UserCooldown {
        uint104 cooldownEnd;
        uint152 underlyingAmount;
    }

    event RewardsReceived(uint256 amount);
    event CooldownDurationUpdated(uint24 previousDuration, uint24 newDuration);

    error OperationNotAllowed();
    error MinSharesViolation();
    error InvalidAmount();
    error InvalidCooldown();
    error ExcessiveRedeemAmount();
    error ExcessiveWithdrawAmount();
    error StillVesting();

    constructor(IERC20 usde, address owner_)
        ERC20("Staked USDe (local)", "sUSDe")
        ERC4626(usde)
        Ownable(owner_)
    {
        silo = new CooldownSilo(usde);
        cooldownDuration = 7 days;
    }

    // ------------------------------------------------------------------ staking (standard ERC-4626)

    function totalAssets() public view override(ERC4626, IERC4626) returns (uint256) {
        return IERC20(asset()).balanceOf(address(this)) - getUnvestedAmount();
    }

    function getUnvestedAmount() public view returns (uint256) {
        uint256 elapsed = block.timestamp - lastDistributionTimestamp;
        if (elapsed >= VESTING_PERIOD) return 0;
        return ((VESTING_PERIOD - elapsed) * vestingAmount) / VESTING_PERIOD;
    }

    /// @notice The owner (Ethena's rewarder) adds yield; it vests into the share price over 8 hours.
    function transferInRewards(uint256 amount) external onlyOwner {
        if (amount == 0) revert InvalidAmount();
        if (getUnvestedAmount() > 0) revert StillVesting();
        vestingAmount = amount;
        lastDistributionTimestamp = block.timestamp;
        IERC20(asset()).safeTransferFrom(msg.sender, address(this), amount);
        emit RewardsReceived(amount);
    }

    /// @notice Soft restriction refuses staking to and from `target` (Ethena's `addToBlacklist(target, false)`).
    function addToBlacklist(address target, bool isFullBlacklisting) external onlyOwner {
        if (isFullBlacklisting) revert OperationNotAllowed();
        softRestricted[target] = true;
    }

    function removeFromBlacklist(address target, bool isFullBlacklisting) external onlyOwner {
        if (isFullBlacklisting) revert OperationNotAllowed();
        softRestricted[target] = false;
    }

    function _deposit(address caller, address receiver, uint256 assets, uint256 shares) internal override {
        if (assets == 0 || shares == 0) revert InvalidAmount();
        if (softRestricted[caller] || softRestricted[receiver]) revert OperationNotAllowed();
        super._deposit(caller, receiver, assets, shares);
        _checkMinShares();
    }

    function _withdraw(address caller, address receiver, address owner_, uint256 assets, uint256 shares)
        internal
        override
    {
        if (assets == 0 || shares == 0) revert InvalidAmount();
        super._withdraw(caller, receiver, owner_, assets, shares);
        _checkMinShares();
    }

    function _checkMinShares() private view {
        uint256 supply = totalSupply();
        if (supply > 0 && supply < MIN_SHARES) revert MinSharesViolation();
    }

    // ------------------------------------------------------------------ leaving (cooldown)

    function withdraw(uint256 assets, address receiver, address owner_)
        public
        override(ERC4626, IERC4626)
        returns (uint256)
    {
        if (cooldownDuration != 0) revert OperationNotAllowed();
        return super.withdraw(assets, receiver, owner_);
    }

    function redeem(uint256 shares, address receiver, address owner_)
        public
        override(ERC4626, IERC4626)
        returns (uint256)
    {
        if (cooldownDuration != 0) revert OperationNotAllowed();
        return super.redeem(shares, receiver, owner_);
    }

    function cooldowns(address owner_) external view returns (uint104 cooldownEnd, uint152 underlyingAmount) {
        UserCooldown memory cooldown = _cooldowns[owner_];
        return (cooldown.cooldownEnd, cooldown.underlyingAmount);
    }

    /// @notice Ethena's published form: the caller's own sUSDe into the caller's cooldown.
    function cooldownAssets(uint256 assets) external returns (uint256 shares) {
        return _cooldownAssets(assets, _msgSender());
    }

    function cooldownShares(uint256 shares) external returns (uint256 assets) {
        return _cooldownShares(shares, _msgSender());
    }

    function cooldownAssets(uint256 assets, address owner_) external returns (uint256 shares) {
        return _cooldownAssets(assets, owner_);
    }

    function cooldownShares(uint256 shares, address owner_) external returns (uint256 assets) {
        return _cooldownShares(shares, owner_);
    }

    function _cooldownAssets(uint256 assets, address owner_) private returns (uint256 shares) {
        if (cooldownDuration == 0) revert OperationNotAllowed();
        if (assets > maxWithdraw(owner_)) revert ExcessiveWithdrawAmount();
        shares = previewWithdraw(assets);
        _startCooldown(owner_, assets);
        _withdraw(_msgSender(), address(silo), owner_, assets, shares);
    }

    function _cooldownShares(uint256 shares, address owner_) private returns (uint256 assets) {
        if (cooldownDuration == 0) revert OperationNotAllowed();
        if (shares > maxRedeem(owner_)) revert ExcessiveRedeemAmount();
        assets = previewRedeem(shares);
        _startCooldown(owner_, assets);
        _withdraw(_msgSender(), address(silo), owner_, assets, shares);
    }

    function unstake(address receiver) external {
        UserCooldown storage cooldown = _cooldowns[msg.sender];
        // As Ethena's: a cooldown switched off releases every pending cooldown at once.
        if (block.timestamp < cooldown.cooldownEnd && cooldownDuration != 0) revert InvalidCooldown();
        uint256 assets = cooldown.underlyingAmount;
        cooldown.cooldownEnd = 0;
        cooldown.underlyingAmount = 0;
        silo.withdraw(receiver, assets);
    }

    function setCooldownDuration(uint24 duration) external onlyOwner {
        if (duration > MAX_COOLDOWN_DURATION) revert InvalidCooldown();
        emit CooldownDurationUpdated(cooldownDuration, duration);
        cooldownDuration = duration;
    }

    function _startCooldown(address owner_, uint256 assets) private {
        _cooldowns[owner_].cooldownEnd = uint104(block.timestamp) + cooldownDuration;
        _cooldowns[owner_].underlyingAmount += uint152(assets);
    }

    function decimals() public pure override(ERC4626, IERC20Metadata) returns (uint8) {
        return 18;
    }
}

/// @notice Holds USDe in cooldown for {LocalStakedUSDeV2} until it is unstaked.
contract CooldownSilo {
    using SafeERC20 for IERC20;

    address public immutable vault;
    IERC20 public immutable usde;

    error OnlyVault();

    constructor(IERC20 usde_) {
        vault = msg.sender;
        usde = usde_;
    }

    function withdraw(address to, uint256 amount) external {
        if (msg.sender != vault) revert OnlyVault();
        usde.safeTransfer(to, amount);
    }
}
