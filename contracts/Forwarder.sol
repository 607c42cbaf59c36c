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
 * @title Forwarder
 * @notice The deposit address of one payment session on one chain. Each instance is a minimal-proxy
 *         clone made by {ForwarderFactory} with OpenZeppelin's `Clones.cloneDeterministicWithImmutableArgs`;
 *         the clone's immutable arguments bind the merchant payout address and the session, so the
 *         address cannot be deployed for anybody else. A flush pays the merchant ({flush}); a refund goes where
 *         the merchant signed ({refund}: the payout address's EIP-712 `Refund` signature, ECDSA or ERC-1271,
 *         each refund id paying at most once); no other path moves its funds.
 * @dev Immutable argument layout, `abi.encodePacked(merchant, sessionId)`, 36 bytes:
 *      bytes [0, 20)  merchant payout address
 *      bytes [20, 36) session id (the session UUID as bytes16)
 *      Packed rather than `abi.encode` because the arguments are part of every clone's code and of the
 *      init code hashed into its CREATE2 address: 36 bytes instead of 64, and nothing to pad or validate.
 *      The off-chain twin of this layout is `predictDepositAddress` in chain/depositAddress.ts.
 *
 *      Clones never run a constructor and have no storage of their own to initialise: everything they
 *      know comes from immutables of this implementation (`factory`), their own code (the arguments) or
 *      the factory's settlement configuration. The reentrancy guard lives in transient storage, which
 *      starts out clear in every transaction, so it needs no initialisation either. The one piece of
 *      storage a clone writes is {refundIdUsed}, which starts out empty as it should.
 *
 *      EIP-712 domain: name "StablePay Forwarder", version "1", the chain id, and verifyingContract =
 *      the clone itself. OpenZeppelin's {EIP712} caches the separator for the implementation's own
 *      address and rebuilds it whenever `address(this)` differs, which in a clone (delegatecall) it always
 *      does: a signature for one forwarder (or chain) is worthless at every other.
 */
contract Forwarder is ReentrancyGuardTransient, EIP712 {
    using SafeERC20 for IERC20;

    /// @notice Length of the immutable arguments appended to every clone's code.
    uint256 public constant ARGS_LENGTH = 36;

    uint256 private constant BPS = 10_000;

    /// @notice EIP-712 type hash of the refund the merchant payout address signs.
    bytes32 public constant REFUND_TYPEHASH =
        keccak256("Refund(address forwarder,address token,address to,uint256 amount,bytes32 refundId)");

    /// @notice Refund ids this forwarder has paid: each signed refund moves funds at most once.
    mapping(bytes32 refundId => bool used) public refundIdUsed;

    /// @notice The {ForwarderFactory} that created this implementation, and so every clone of it.
    address public immutable factory;

    /// @dev The implementation's own address; in a clone (delegatecall) `address(this)` differs from it.
    address private immutable _self = address(this);

    /**
     * @notice The deposit of `token` was settled for the merchant: `amountIn` became `usdeAmount` USDe,
     *         then either staked here (`bridged` false, `sharesOrNonce` = sUSDe shares minted to the merchant)
     *         or sent to the settlement chain (`bridged` true, `sharesOrNonce` = the messenger's packet nonce,
     *         `usdeAmount` = what the messenger carries; a remainder it cannot carry went to the merchant here).
     */
    event Flushed(address indexed token, uint256 amountIn, uint256 usdeAmount, bool bridged, uint256 sharesOrNonce);

    /// @notice `amount` of `token` went back to `to`, as the merchant signed for `refundId`.
    event Refunded(bytes32 indexed refundId, address indexed token, address indexed to, uint256 amount);

    /// @notice Native value was sent with a flush that pays no bridge fee (on the settlement chain).
    error UnexpectedValue();
    /// @notice Thrown when the arguments are read from the implementation instead of a clone.
    error NotAClone();
    /// @notice Only the settlement operator of the factory may flush.
    error NotOperator();
    /// @notice The forwarder holds none of the token.
    error NothingToFlush();
    /**
     * @notice The flush would yield `amountOut` USDe, below `minAmountOut`: the larger of the operator's
     *         `minUsdeOut` and the factory's par floor. Same error (and selector) as {ISwapRouter.InsufficientOutput}.
     */
    error InsufficientOutput(uint256 amountOut, uint256 minAmountOut);
    /// @notice A refund to the zero address (the tokens would be burnt or the transfer revert).
    error RefundToZeroAddress();
    /// @notice A refund of nothing.
    error ZeroRefund();
    /// @notice This refund id was already paid by this forwarder: a replayed signature moves nothing.
    error RefundIdUsed(bytes32 refundId);
    /// @notice The signature is not the merchant payout address's (ECDSA, or ERC-1271 for a contract) over this refund.
    error InvalidRefundSignature();
    /// @notice The forwarder holds `balance` of the token, less than the `amount` signed.
    error RefundExceedsBalance(uint256 amount, uint256 balance);

    constructor() EIP712("StablePay Forwarder", "1") {
        factory = msg.sender;
    }

    /// @notice The merchant payout address this deposit address forwards to.
    function merchant() external view returns (address merchant_) {
        (merchant_, ) = _cloneArgs();
    }

    /// @notice The payment session (UUID as bytes16) this deposit address belongs to.
    function sessionId() external view returns (bytes16 sessionId_) {
        (, sessionId_) = _cloneArgs();
    }

    /**
     * @notice Settles this forwarder's whole balance of `token` for the merchant as sUSDe and returns the
     *         USDe amount it became (for a bridge: the amount sent). Only the factory's settlement operator may
     *         call it. Off the settlement chain `msg.value` pays the messenger's fee (see {bridgeFee}); what
     *         the messenger does not need is refunded to the operator.
     * @dev    Steps: swap `token` to USDe through the configured router (skipped for USDe itself), then on
     *         the settlement chain deposit the USDe into sUSDe for the merchant; elsewhere send it through
     *         the messenger to the settlement composer with `abi.encode(merchant, sessionId)`, and pay the
     *         merchant here whatever fraction of a unit the messenger cannot carry (an OFT's dust).
     *         The minimum accepted is `max(minUsdeOut, par floor)`, the par floor being `amountIn` scaled to
     *         18 decimals less `maxSlippageBps`: USDC, USDT and USDe are all dollars, so however the operator's
     *         quote was obtained, a flush never settles further below par than the owner allows.
     *         Receivers are never caller-supplied: the merchant comes from the clone's code, every other
     *         address from the owner's configuration.
     */
    function flush(address token, uint256 minUsdeOut) external payable nonReentrant returns (uint256 usdeAmount) {
        (address merchant_, bytes16 sessionId_) = _cloneArgs();
        IForwarderFactory.Settlement memory config = IForwarderFactory(factory).settlement();
        if (msg.sender != config.operator) revert NotOperator();

        uint256 amountIn = IERC20(token).balanceOf(address(this));
        if (amountIn == 0) revert NothingToFlush();
        uint256 minAmountOut = Math.max(minUsdeOut, _parFloor(token, amountIn, config.maxSlippageBps));

        if (token == config.usde) {
            usdeAmount = amountIn;
        } else {
            usdeAmount = _swapToUsde(config, token, amountIn, minAmountOut);
        }
        if (usdeAmount < minAmountOut) revert InsufficientOutput(usdeAmount, minAmountOut);

        IERC20 usde = IERC20(config.usde);
        if (block.chainid == config.settlementChainId) {
            if (msg.value != 0) revert UnexpectedValue();
            usde.forceApprove(config.stakedUsde, usdeAmount);
            uint256 shares = IERC4626(config.stakedUsde).deposit(usdeAmount, merchant_);
            emit Flushed(token, amountIn, usdeAmount, false, shares);
        } else {
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
            usdeAmount = sent;
            emit Flushed(token, amountIn, usdeAmount, true, nonce);
        }
    }

    /**
     * @notice Sends `amount` of `token` from this forwarder to `to`, authorized by the merchant payout address's
     *         EIP-712 signature of `Refund(forwarder, token, to, amount, refundId)` (see {refundDigest}). Anyone may
     *         relay it: the signature is the authorization, and each `refundId` pays once.
     * @dev    The signer is the clone's own `merchant`, never caller-supplied; SignatureChecker answers ECDSA (low-s,
     *         65 bytes) for an address without code and ERC-1271 `isValidSignature` for a contract, so a smart-account
     *         payout address can authorize. The id is marked used before the transfer, under the same reentrancy
     *         guard as {flush}.
     */
    function refund(address token, address to, uint256 amount, bytes32 refundId, bytes calldata signature)
        external
        nonReentrant
    {
        (address merchant_, ) = _cloneArgs();
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

    /**
     * @notice The native fee a flush of `usdeAmount` USDe must carry as `msg.value`: the messenger's quote for
     *         the very message this forwarder sends (zero on the settlement chain, where nothing is bridged).
     */
    function bridgeFee(uint256 usdeAmount) external view returns (uint256 nativeFee) {
        (address merchant_, bytes16 sessionId_) = _cloneArgs();
        IForwarderFactory.Settlement memory config = IForwarderFactory(factory).settlement();
        if (block.chainid == config.settlementChainId) return 0;
        return ISettlementMessenger(config.messenger).quoteSend(
            config.settlementChainId,
            config.settlementComposer,
            usdeAmount,
            abi.encode(merchant_, sessionId_)
        );
    }

    /**
     * @dev Sells `amountIn` of `token` for USDe and returns the USDe this forwarder actually received
     *      (its balance change, not the router's word for it). No allowance outlives the swap.
     */
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

    /// @dev `amountIn` of a dollar stablecoin as 18-decimal USDe at par, less `maxSlippageBps`.
    function _parFloor(address token, uint256 amountIn, uint16 maxSlippageBps) private view returns (uint256) {
        uint8 decimals = IERC20Metadata(token).decimals();
        uint256 atPar = decimals <= 18 ? amountIn * 10 ** (18 - decimals) : amountIn / 10 ** (decimals - 18);
        return Math.mulDiv(atPar, BPS - maxSlippageBps, BPS);
    }

    function _cloneArgs() private view returns (address merchant_, bytes16 sessionId_) {
        if (address(this) == _self) revert NotAClone();
        bytes memory args = Clones.fetchCloneArgs(address(this));
        if (args.length != ARGS_LENGTH) revert NotAClone();
        assembly ("memory-safe") {
            // First word: the 20-byte address in its high bytes.
            merchant_ := shr(96, mload(add(args, 0x20)))
            // Word starting at byte 20: the 16-byte session id in its high bytes, low bytes cleared.
            sessionId_ := and(mload(add(args, 0x34)), shl(128, not(0)))
        }
    }
}
