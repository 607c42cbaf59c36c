// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {IStakedUSDe} from "../interfaces/external/IStakedUSDe.sol";
import {IERC7540Operator, IERC7540Redeem, IERC7575} from "../interfaces/IERC7540.sol";
import {RedeemRequestUnstaker} from "./RedeemRequestUnstaker.sol";

/**
 * @title YieldVault
 * @notice A merchant-branded ERC-4626 vault whose deposits earn the sUSDe rate: every deposit is staked into
 *         `stakedVault` (sUSDe, an ERC-4626 over this vault's asset) and `totalAssets` is what the vault's sUSDe
 *         redeems for, so the share price rises exactly as sUSDe's does. While sUSDe has a withdrawal cooldown on
 *         (Ethena's `cooldownDuration() != 0`) redemption is asynchronous (ERC-7540): `requestRedeem` burns the
 *         shares and starts the cooldown for exactly their assets, and `redeem`/`withdraw` pay them once it ends.
 * @dev Hazards and their guards:
 *      - Inflation (first-depositor donation) attack: OpenZeppelin's virtual shares with a 6-decimal offset, so a
 *        donation must be a million times the victim's deposit to round it to zero shares.
 *      - Rounding: OpenZeppelin's directions (deposit and redeem round down, mint and withdraw round up, always
 *        against the caller); `totalAssets` uses sUSDe's `previewRedeem`, which rounds down too. A request is
 *        valued as a synchronous redeem would be (`convertToAssets`, rounded down) and takes sUSDe's
 *        `previewWithdraw` of it (rounded up), so it never takes more than its share from those who stay.
 *      - Re-entrancy through a token with transfer hooks: every entry point that moves assets is `nonReentrant`,
 *        and shares are burnt before assets leave.
 *      - sUSDe keeps one cooldown per address and restarts it on every new request, so every redeem request gets
 *        its own {RedeemRequestUnstaker} clone: one holder's request never delays or touches another's.
 *      - Spam: a request names a controller other than its owner only for that controller or its operator, and a
 *        controller has at most `MAX_OPEN_REQUESTS` open requests, so claims loop over a bounded list.
 */
contract YieldVault is ERC4626, ReentrancyGuard, IERC7540Operator, IERC7540Redeem, IERC165 {
    using SafeERC20 for IERC20;

    uint8 private constant DECIMALS_OFFSET = 6;
    /// @notice Open (not fully claimed) redeem requests one controller may have at once.
    uint256 public constant MAX_OPEN_REQUESTS = 16;

    /// @notice The sUSDe vault deposits are staked in.
    IERC4626 public immutable stakedVault;
    /// @notice The implementation every request's unstaker clone runs.
    address public immutable unstakerImplementation;

    struct RedeemRequestState {
        address controller;
        address unstaker;
        /// @notice Shares not yet claimed (burnt at the request).
        uint256 shares;
        /// @notice Assets not yet claimed; fixed at the request (sUSDe's cooldown fixes the USDe amount).
        uint256 assets;
    }

    uint256 private _lastRequestId;
    mapping(uint256 requestId => RedeemRequestState) private _requests;
    mapping(address controller => uint256[] requestIds) private _openRequestIds;
    mapping(address controller => mapping(address operator => bool)) public isOperator;

    /// @notice `requestRedeem` while sUSDe has no cooldown: redeem synchronously instead.
    error RedemptionIsSynchronous();
    /// @notice ERC-7540: `previewRedeem`/`previewWithdraw` revert while redemption is asynchronous.
    error RedemptionIsAsynchronous();
    error RequestWorthNothing(uint256 shares);
    error ControllerNotApproved(address controller, address sender);
    error NotControllerOrOperator(address controller, address sender);
    error TooManyOpenRequests(address controller);

    constructor(IERC4626 stakedVault_, string memory name_, string memory symbol_)
        ERC20(name_, symbol_)
        ERC4626(IERC20(stakedVault_.asset()))
    {
        stakedVault = stakedVault_;
        unstakerImplementation = address(new RedeemRequestUnstaker(IStakedUSDe(address(stakedVault_))));
    }

    /// @notice The assets the vault's sUSDe redeems for now (assets of open requests are no longer in it).
    function totalAssets() public view override returns (uint256) {
        return stakedVault.previewRedeem(stakedVault.balanceOf(address(this)));
    }

    /// @notice Synchronously: at most what the vault's sUSDe can pay out now. Asynchronously (cooldown on, or the
    ///         owner still has open requests): the assets of the owner's claimable requests.
    function maxWithdraw(address owner) public view override returns (uint256) {
        if (_redeemsAsynchronously(owner)) {
            (, uint256 assets) = _claimable(owner);
            return assets;
        }
        uint256 own = super.maxWithdraw(owner);
        uint256 available = stakedVault.maxWithdraw(address(this));
        return own < available ? own : available;
    }

    function maxRedeem(address owner) public view override returns (uint256) {
        if (_redeemsAsynchronously(owner)) {
            (uint256 shares,) = _claimable(owner);
            return shares;
        }
        uint256 own = super.maxRedeem(owner);
        uint256 available = previewWithdraw(stakedVault.maxWithdraw(address(this)));
        return own < available ? own : available;
    }

    function previewRedeem(uint256 shares) public view override returns (uint256) {
        if (cooldownActive()) revert RedemptionIsAsynchronous();
        return super.previewRedeem(shares);
    }

    function previewWithdraw(uint256 assets) public view override returns (uint256) {
        if (cooldownActive()) revert RedemptionIsAsynchronous();
        return super.previewWithdraw(assets);
    }

    /// @notice Whether the staked vault has a withdrawal cooldown on (Ethena's `cooldownDuration() != 0`). A staked
    ///         vault without `cooldownDuration` (a plain ERC-4626) has none.
    function cooldownActive() public view returns (bool) {
        (bool ok, bytes memory data) =
            address(stakedVault).staticcall(abi.encodeWithSignature("cooldownDuration()"));
        return ok && data.length >= 32 && abi.decode(data, (uint256)) != 0;
    }

    /// @notice ERC-7575: the vault is its own share token.
    function share() external view returns (address) {
        return address(this);
    }

    /// @notice ERC-165. The ERC-7540 redeem interface is reported while redemption is asynchronous (sUSDe's
    ///         cooldown on); without a cooldown the vault is a plain synchronous ERC-4626.
    function supportsInterface(bytes4 interfaceId) external view returns (bool) {
        if (interfaceId == type(IERC7540Redeem).interfaceId) return cooldownActive();
        return interfaceId == type(IERC165).interfaceId || interfaceId == type(IERC7540Operator).interfaceId
            || interfaceId == type(IERC7575).interfaceId;
    }

    // ------------------------------------------------------------------ ERC-7540 operators and requests

    function setOperator(address operator, bool approved) external returns (bool) {
        isOperator[msg.sender][operator] = approved;
        emit OperatorSet(msg.sender, operator, approved);
        return true;
    }

    /// @notice Burns `shares` of `owner` and starts sUSDe's cooldown for exactly their assets (what
    ///         `convertToAssets(shares)` says now) in the request's own unstaker; `controller` claims them with
    ///         `redeem`/`withdraw` once the cooldown ends. The shares earn nothing from here on.
    function requestRedeem(uint256 shares, address controller, address owner)
        external
        nonReentrant
        returns (uint256 requestId)
    {
        if (!cooldownActive()) revert RedemptionIsSynchronous();
        if (owner != msg.sender && !isOperator[owner][msg.sender]) _spendAllowance(owner, msg.sender, shares);
        if (controller != owner && controller != msg.sender && !isOperator[controller][msg.sender]) {
            revert ControllerNotApproved(controller, msg.sender);
        }
        if (_openRequestIds[controller].length >= MAX_OPEN_REQUESTS) revert TooManyOpenRequests(controller);
        uint256 assets = _convertToAssets(shares, Math.Rounding.Floor);
        if (assets == 0) revert RequestWorthNothing(shares);
        _burn(owner, shares);

        address unstaker = Clones.clone(unstakerImplementation);
        IERC20(address(stakedVault)).safeTransfer(unstaker, stakedVault.previewWithdraw(assets));
        RedeemRequestUnstaker(unstaker).startCooldown(assets);

        requestId = ++_lastRequestId;
        _requests[requestId] = RedeemRequestState(controller, unstaker, shares, assets);
        _openRequestIds[controller].push(requestId);
        emit RedeemRequest(controller, owner, requestId, msg.sender, shares);
    }

    /// @notice Shares of the request still in cooldown (requestId 0: all of `controller`'s).
    function pendingRedeemRequest(uint256 requestId, address controller) external view returns (uint256 shares) {
        return _requestShares(requestId, controller, false);
    }

    /// @notice Shares of the request whose cooldown has ended, not yet claimed (requestId 0: all of `controller`'s).
    function claimableRedeemRequest(uint256 requestId, address controller) external view returns (uint256 shares) {
        return _requestShares(requestId, controller, true);
    }

    /// @notice One request as it stands: who claims it, its unclaimed shares and assets, and when its cooldown
    ///         ends (0 once claimable through a cooldown switched off or once unstaked).
    function redeemRequest(uint256 requestId)
        external
        view
        returns (address controller, uint256 shares, uint256 assets, uint256 claimableAt)
    {
        RedeemRequestState storage request = _requests[requestId];
        if (request.unstaker == address(0)) return (address(0), 0, 0, 0);
        uint256 end = RedeemRequestUnstaker(request.unstaker).cooldownEnd();
        return (request.controller, request.shares, request.assets, cooldownActive() ? end : 0);
    }

    /// @notice The ids of `controller`'s requests not yet fully claimed.
    function openRedeemRequests(address controller) external view returns (uint256[] memory) {
        return _openRequestIds[controller];
    }

    function deposit(uint256 assets, address receiver) public override nonReentrant returns (uint256) {
        return super.deposit(assets, receiver);
    }

    function mint(uint256 shares, address receiver) public override nonReentrant returns (uint256) {
        return super.mint(shares, receiver);
    }

    /// @notice Synchronously the ERC-4626 withdraw. Asynchronously (ERC-7540) the claim of `assets` from the
    ///         claimable requests of `controller` (the third argument), by it or its operator.
    function withdraw(uint256 assets, address receiver, address controller)
        public
        override
        nonReentrant
        returns (uint256)
    {
        if (!_redeemsAsynchronously(controller)) return super.withdraw(assets, receiver, controller);
        uint256 maxAssets = maxWithdraw(controller);
        if (assets > maxAssets) revert ERC4626ExceededMaxWithdraw(controller, assets, maxAssets);
        (uint256 shares,) = _claim(controller, receiver, assets, false);
        emit Withdraw(msg.sender, receiver, controller, assets, shares);
        return shares;
    }

    /// @notice Synchronously the ERC-4626 redeem. Asynchronously (ERC-7540) the claim of `shares` from the
    ///         claimable requests of `controller` (the third argument), by it or its operator.
    function redeem(uint256 shares, address receiver, address controller)
        public
        override
        nonReentrant
        returns (uint256)
    {
        if (!_redeemsAsynchronously(controller)) return super.redeem(shares, receiver, controller);
        uint256 maxShares = maxRedeem(controller);
        if (shares > maxShares) revert ERC4626ExceededMaxRedeem(controller, shares, maxShares);
        (, uint256 assets) = _claim(controller, receiver, shares, true);
        emit Withdraw(msg.sender, receiver, controller, assets, shares);
        return assets;
    }

    /// @dev Asynchronous while sUSDe's cooldown is on, and for a controller with open requests (a cooldown switched
    ///      off while they were open: they are claimed first, then the holder redeems synchronously again).
    function _redeemsAsynchronously(address controller) private view returns (bool) {
        return _openRequestIds[controller].length != 0 || cooldownActive();
    }

    function _isClaimable(RedeemRequestState storage request) private view returns (bool) {
        // Ethena's unstake pays at the cooldown's end, or at once when the cooldown has been switched off.
        return !cooldownActive() || block.timestamp >= RedeemRequestUnstaker(request.unstaker).cooldownEnd();
    }

    function _claimable(address controller) private view returns (uint256 shares, uint256 assets) {
        uint256[] storage ids = _openRequestIds[controller];
        for (uint256 i = 0; i < ids.length; i++) {
            RedeemRequestState storage request = _requests[ids[i]];
            if (!_isClaimable(request)) continue;
            shares += request.shares;
            assets += request.assets;
        }
    }

    function _requestShares(uint256 requestId, address controller, bool claimable)
        private
        view
        returns (uint256 shares)
    {
        if (requestId != 0) {
            RedeemRequestState storage request = _requests[requestId];
            if (request.controller != controller || request.unstaker == address(0)) return 0;
            return _isClaimable(request) == claimable ? request.shares : 0;
        }
        uint256[] storage ids = _openRequestIds[controller];
        for (uint256 i = 0; i < ids.length; i++) {
            RedeemRequestState storage request = _requests[ids[i]];
            if (_isClaimable(request) == claimable) shares += request.shares;
        }
    }

    /// @dev Pays `amount` (shares when `byShares`, else assets) from `controller`'s claimable requests in order; the
    ///      caller has checked it against the max. A partial claim pays in proportion, rounded against the claimant.
    function _claim(address controller, address receiver, uint256 amount, bool byShares)
        private
        returns (uint256 shares, uint256 assets)
    {
        if (controller != msg.sender && !isOperator[controller][msg.sender]) {
            revert NotControllerOrOperator(controller, msg.sender);
        }
        uint256[] storage ids = _openRequestIds[controller];
        uint256 i = 0;
        while (amount != 0 && i < ids.length) {
            RedeemRequestState storage request = _requests[ids[i]];
            if (!_isClaimable(request)) {
                i++;
                continue;
            }
            (uint256 takeShares, uint256 payAssets) = _portion(request, amount, byShares);
            amount -= byShares ? takeShares : payAssets;
            shares += takeShares;
            assets += payAssets;
            request.shares -= takeShares;
            request.assets -= payAssets;
            address unstaker = request.unstaker;
            if (request.shares == 0) {
                delete _requests[ids[i]];
                ids[i] = ids[ids.length - 1];
                ids.pop();
            } else {
                i++;
            }
            RedeemRequestUnstaker(unstaker).pay(receiver, payAssets);
        }
    }

    function _portion(RedeemRequestState storage request, uint256 amount, bool byShares)
        private
        view
        returns (uint256 takeShares, uint256 payAssets)
    {
        if (byShares) {
            if (amount >= request.shares) return (request.shares, request.assets);
            return (amount, Math.mulDiv(request.assets, amount, request.shares, Math.Rounding.Floor));
        }
        if (amount >= request.assets) return (request.shares, request.assets);
        return (Math.mulDiv(request.shares, amount, request.assets, Math.Rounding.Ceil), amount);
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
