// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {IForwarderFactory} from "./interfaces/IForwarderFactory.sol";
import {ISettlementMessenger} from "./interfaces/ISettlementMessenger.sol";
import {ISwapRouter} from "./interfaces/ISwapRouter.sol";

/**
 * @title CappedForwarder
 * @notice The deposit address of one session on one chain whose merchant chose `overpayment: "hold"`: a
 *         {Forwarder} whose flushes together never settle more than the session's amount. What is paid above it
 *         stays here, and leaves only as a refund the merchant payout address signed ({refund}); a flush pays the
 *         merchant, a refund goes where the merchant signed, and no other path moves its funds.
 * @dev A separate contract rather than a change to {Forwarder}: every existing deposit address is the CREATE2
 *      address of a clone of Forwarder's exact bytecode (made by {ForwarderFactory}, whose own address follows from
 *      that bytecode), so any edit to Forwarder would move the deposit addresses of every session already
 *      created. Flush, refund and bridge fee behave as Forwarder's, with the same events, errors and EIP-712
 *      domain (name "StablePay Forwarder", version "1", verifyingContract = the clone), so the service signs,
 *      relays and reads both alike.
 *
 *      Immutable argument layout, `abi.encodePacked(merchant, sessionId, capMicroUsd)`, 44 bytes:
 *      bytes [0, 20)  merchant payout address
 *      bytes [20, 36) session id (the session UUID as bytes16)
 *      bytes [36, 44) the cap: the session's amount in micro-dollars (uint64, never 0)
 *      The cap is part of the clone's code and so of its CREATE2 address: a clone with another cap (or none) is
 *      another address. The off-chain twin is `predictDepositAddress` in chain/depositAddress.ts.
 *
 *      The cap is counted at par in 18 decimals ({flushedAtPar}): a flush of `amountIn` base units of a token with
 *      `d` decimals (d ≤ 18) counts `amountIn × 10^(18−d)`, exactly, whatever the swap returned (the par floor
 *      bounds that). A flush settles `min(balance, (cap × 10^12 − flushedAtPar) / 10^(18−d))`, so across
 *      flushes and tokens the sum at par never exceeds the cap. Below one base unit of a 6-decimal token left
 *      under the cap (after a USDe flush) stays held.
 */
contract CappedForwarder is ReentrancyGuardTransient, EIP712 {
    using SafeERC20 for IERC20;

    /// @notice Length of the immutable arguments appended to every clone's code.
    uint256 public constant ARGS_LENGTH = 44;

    uint256 private constant BPS = 10_000;
    /// @dev Micro-dollars (the cap's unit) to 18-decimal dollars (the count's unit).
    uint256 private constant MICRO_USD_TO_PAR = 1e12;

    /// @notice EIP-712 type hash of the refund the merchant payout address signs (as {Forwarder}'s).
    bytes32 public constant REFUND_TYPEHASH =
        keccak256("Refund(address forwarder,address token,address to,uint256 amount,bytes32 refundId)");

    /// @notice Refund ids this forwarder has paid: each signed refund moves funds at most once.
    mapping(bytes32 refundId => bool used) public refundIdUsed;

    /// @notice What the flushes settled so far, every token at par, in 18-decimal dollars.
    uint256 public flushedAtPar;

    /// @notice The {CappedForwarderFactory} that created this implementation, and so every clone of it.
    address public immutable factory;

    address private immutable _self = address(this);

    /// @notice As {Forwarder.Flushed}; `amountIn` is what the cap let through, not necessarily the balance.
    event Flushed(address indexed token, uint256 amountIn, uint256 usdeAmount, bool bridged, uint256 sharesOrNonce);

    /// @notice `amount` of `token` went back to `to`, as the merchant signed for `refundId`.
    event Refunded(bytes32 indexed refundId, address indexed token, address indexed to, uint256 amount);

    error UnexpectedValue();
    error NotAClone();
    error NotOperator();
    /// @notice The forwarder holds none of the token.
    error NothingToFlush();
    /**
     * @notice The flushes already settled `flushedAtPar` (18-decimal dollars) of the cap `capAtPar`: the token's
     *         balance is held for refunds and no flush moves it.
     */
    error FlushCapReached(uint256 capAtPar, uint256 flushedAtPar);
    /// @notice A token with more than 18 decimals cannot be counted at par exactly; it can only be refunded.
    error UnsupportedDecimals(uint8 decimals);
    error InsufficientOutput(uint256 amountOut, uint256 minAmountOut);
    error RefundToZeroAddress();
    error ZeroRefund();
    error RefundIdUsed(bytes32 refundId);
    error InvalidRefundSignature();
    error RefundExceedsBalance(uint256 amount, uint256 balance);

    constructor() EIP712("StablePay Forwarder", "1") {
        factory = msg.sender;
    }

    /// @notice The merchant payout address this deposit address forwards to.
    function merchant() external view returns (address merchant_) {
        (merchant_, , ) = _cloneArgs();
    }

    /// @notice The payment session (UUID as bytes16) this deposit address belongs to.
    function sessionId() external view returns (bytes16 sessionId_) {
        (, sessionId_, ) = _cloneArgs();
    }

    /// @notice The most the flushes of this forwarder settle together: the session's amount, in micro-dollars.
    function capMicroUsd() external view returns (uint64 cap) {
        (, , cap) = _cloneArgs();
    }

    /// @notice How much of its balance of `token` the next flush would settle (0 once the cap is reached).
    function flushable(address token) public view returns (uint256) {
        (, , uint64 cap) = _cloneArgs();
        uint256 scale = _parScale(token);
        uint256 capAtPar = uint256(cap) * MICRO_USD_TO_PAR;
        uint256 room = capAtPar > flushedAtPar ? (capAtPar - flushedAtPar) / scale : 0;
        return Math.min(IERC20(token).balanceOf(address(this)), room);
    }

    /**
     * @notice Settles as much of this forwarder's `token` as the cap still allows ({flushable}) for the merchant as
     *         sUSDe, as {Forwarder.flush} does with the whole balance. Only the factory's settlement operator may call.
     * @dev The count is raised before any external call; the par floor is computed on the capped amount.
     */
    function flush(address token, uint256 minUsdeOut) external payable nonReentrant returns (uint256 usdeAmount) {
        (address merchant_, bytes16 sessionId_, uint64 cap) = _cloneArgs();
        IForwarderFactory.Settlement memory config = IForwarderFactory(factory).settlement();
        if (msg.sender != config.operator) revert NotOperator();

        if (IERC20(token).balanceOf(address(this)) == 0) revert NothingToFlush();
        uint256 amountIn = flushable(token);
        if (amountIn == 0) revert FlushCapReached(uint256(cap) * MICRO_USD_TO_PAR, flushedAtPar);
        uint256 atPar = amountIn * _parScale(token);
        flushedAtPar += atPar;
        uint256 minAmountOut = Math.max(minUsdeOut, Math.mulDiv(atPar, BPS - config.maxSlippageBps, BPS));

        usdeAmount = token == config.usde ? amountIn : _swapToUsde(config, token, amountIn, minAmountOut);
        if (usdeAmount < minAmountOut) revert InsufficientOutput(usdeAmount, minAmountOut);
        usdeAmount = _deliver(config, merchant_, sessionId_, token, amountIn, usdeAmount);
    }

    /**
     * @notice Sends `amount` of `token` to `to`, authorized by the merchant payout address's EIP-712 `Refund`
     *         signature, exactly as {Forwarder.refund}: the held surplus (or anything not yet flushed) leaves only here.
     */
    function refund(address token, address to, uint256 amount, bytes32 refundId, bytes calldata signature)
        external
        nonReentrant
    {
        (address merchant_, , ) = _cloneArgs();
        if (to == address(0)) revert RefundToZeroAddress();
        if (amount == 0) revert ZeroRefund();
        if (refundIdUsed[refundId]) revert RefundIdUsed(refundId);
        bytes32 digest = refundDigest(token, to, amount, refundId);
        if (!SignatureChecker.isValidSignatureNowCalldata(merchant_, digest, signature)) revert InvalidRefundSignature();
        uint256 balance = IERC20(token).balanceOf(address(this));
        if (amount > balance) revert RefundExceedsBalance(amount, balance);

        refundIdUsed[refundId] = true;
        IERC20(token).safeTransfer(to, amount);
        emit Refunded(refundId, token, to, amount);
    }

    /// @notice The EIP-712 digest the merchant payout address signs for a refund from this forwarder.
    function refundDigest(address token, address to, uint256 amount, bytes32 refundId) public view returns (bytes32) {
        if (address(this) == _self) revert NotAClone();
        return _hashTypedDataV4(keccak256(abi.encode(REFUND_TYPEHASH, address(this), token, to, amount, refundId)));
    }

    /// @notice The native fee a flush of `usdeAmount` USDe must carry (zero on the settlement chain).
    function bridgeFee(uint256 usdeAmount) external view returns (uint256 nativeFee) {
        (address merchant_, bytes16 sessionId_, ) = _cloneArgs();
        IForwarderFactory.Settlement memory config = IForwarderFactory(factory).settlement();
        if (block.chainid == config.settlementChainId) return 0;
        return ISettlementMessenger(config.messenger).quoteSend(
            config.settlementChainId,
            config.settlementComposer,
            usdeAmount,
            abi.encode(merchant_, sessionId_)
        );
    }

    /// @dev Stakes the USDe for the merchant here, or sends it to the settlement chain; returns what was delivered.
    function _deliver(
        IForwarderFactory.Settlement memory config,
        address merchant_,
        bytes16 sessionId_,
        address token,
        uint256 amountIn,
        uint256 usdeAmount
    ) private returns (uint256) {
        IERC20 usde = IERC20(config.usde);
        if (block.chainid == config.settlementChainId) {
            if (msg.value != 0) revert UnexpectedValue();
            usde.forceApprove(config.stakedUsde, usdeAmount);
            uint256 shares = IERC4626(config.stakedUsde).deposit(usdeAmount, merchant_);
            emit Flushed(token, amountIn, usdeAmount, false, shares);
            return usdeAmount;
        }
        usde.forceApprove(config.messenger, usdeAmount);
        (uint64 nonce, uint256 sent) = ISettlementMessenger(config.messenger).send{value: msg.value}(
            config.settlementChainId,
            config.settlementComposer,
            usdeAmount,
            abi.encode(merchant_, sessionId_),
            msg.sender
        );
        if (usde.allowance(address(this), config.messenger) != 0) usde.forceApprove(config.messenger, 0);
        if (sent < usdeAmount) usde.safeTransfer(merchant_, usdeAmount - sent);
        emit Flushed(token, amountIn, sent, true, nonce);
        return sent;
    }

    /// @dev Sells `amountIn` of `token` for USDe; returns the USDe this forwarder actually received.
    function _swapToUsde(
        IForwarderFactory.Settlement memory config,
        address token,
        uint256 amountIn,
        uint256 minAmountOut
    ) private returns (uint256 received) {
        IERC20 usde = IERC20(config.usde);
        uint256 usdeBefore = usde.balanceOf(address(this));
        IERC20(token).forceApprove(config.swapRouter, amountIn);
        ISwapRouter(config.swapRouter).swapExactIn(token, config.usde, amountIn, minAmountOut, address(this));
        if (IERC20(token).allowance(address(this), config.swapRouter) != 0) {
            IERC20(token).forceApprove(config.swapRouter, 0);
        }
        received = usde.balanceOf(address(this)) - usdeBefore;
    }

    /// @dev 10^(18 − decimals): one base unit of `token` in 18-decimal dollars at par.
    function _parScale(address token) private view returns (uint256) {
        uint8 decimals = IERC20Metadata(token).decimals();
        if (decimals > 18) revert UnsupportedDecimals(decimals);
        return 10 ** (18 - decimals);
    }

    function _cloneArgs() private view returns (address merchant_, bytes16 sessionId_, uint64 cap) {
        if (address(this) == _self) revert NotAClone();
        bytes memory args = Clones.fetchCloneArgs(address(this));
        if (args.length != ARGS_LENGTH) revert NotAClone();
        assembly ("memory-safe") {
            merchant_ := shr(96, mload(add(args, 0x20)))
            sessionId_ := and(mload(add(args, 0x34)), shl(128, not(0)))
            // Word starting at byte 36: the 8-byte cap in its high bytes.
            cap := shr(192, mload(add(args, 0x44)))
        }
    }
}
