// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ISettlementComposer, ISettlementMessenger} from "../interfaces/ISettlementMessenger.sol";
import {TestStablecoin} from "./TestStablecoin.sol";

/**
 * @title LocalMessenger
 * @notice Local stand-in for a LayerZero-style USDe OFT and its endpoint. {send} locks USDe on the source
 *         chain and emits a packet; the dev relayer (dev/relayer.ts) reads it and calls {deliver} on the
 *         destination chain's messenger, which mints the USDe to the receiver and then runs its compose step.
 * @dev Deployed at the same address on every local chain (same USDe, same relayer), so a packet needs no
 *      peer configuration. Delivery is atomic: when compose reverts nothing is minted and the packet stays
 *      undelivered, for the relayer to retry. Never deployed outside local chains.
 */
contract LocalMessenger is ISettlementMessenger {
    using SafeERC20 for IERC20;

    /// @notice The USDe this messenger carries (a {TestStablecoin}, so the destination side can mint).
    address public immutable usde;
    /// @notice The only account that may deliver packets.
    address public immutable relayer;
    /// @notice Nonce of the last packet sent from this chain (the first packet is 1).
    uint64 public outboundNonce;

    mapping(uint256 srcChainId => mapping(uint64 nonce => bool)) private _delivered;

    event PacketSent(
        uint64 indexed nonce,
        uint256 srcChainId,
        uint256 indexed dstChainId,
        address from,
        address to,
        uint256 amount,
        bytes composeMsg
    );
    event PacketDelivered(uint256 indexed srcChainId, uint64 indexed nonce, address to, uint256 amount);

    error NotRelayer();
    error AlreadyDelivered();
    error RefundFailed();

    constructor(address usde_, address relayer_) {
        usde = usde_;
        relayer = relayer_;
    }

    /// @inheritdoc ISettlementMessenger
    /// @dev The stand-in charges nothing.
    function quoteSend(uint256, address, uint256, bytes calldata) external pure returns (uint256 nativeFee) {
        return 0;
    }

    /// @inheritdoc ISettlementMessenger
    /// @dev Carries the whole amount; any native value sent along is refunded at once.
    function send(uint256 dstChainId, address to, uint256 amount, bytes calldata composeMsg, address refundAddress)
        external
        payable
        returns (uint64 nonce, uint256 amountSent)
    {
        IERC20(usde).safeTransferFrom(msg.sender, address(this), amount);
        nonce = ++outboundNonce;
        amountSent = amount;
        emit PacketSent(nonce, block.chainid, dstChainId, msg.sender, to, amount, composeMsg);
        if (msg.value != 0) {
            (bool refunded, ) = refundAddress.call{value: msg.value}("");
            if (!refunded) revert RefundFailed();
        }
    }

    /**
     * @notice Delivers packet `nonce` of chain `srcChainId`: mints `amount` USDe to `to`, then (when the packet
     *         has a compose message) calls `to.compose`. Each packet is delivered at most once.
     */
    function deliver(uint256 srcChainId, uint64 nonce, address to, uint256 amount, bytes calldata composeMsg) external {
        if (msg.sender != relayer) revert NotRelayer();
        if (_delivered[srcChainId][nonce]) revert AlreadyDelivered();
        _delivered[srcChainId][nonce] = true;
        TestStablecoin(usde).mint(to, amount);
        if (composeMsg.length != 0) ISettlementComposer(to).compose(srcChainId, nonce, amount, composeMsg);
        emit PacketDelivered(srcChainId, nonce, to, amount);
    }

    /// @notice Whether packet `nonce` of chain `srcChainId` has been delivered here.
    function delivered(uint256 srcChainId, uint64 nonce) external view returns (bool) {
        return _delivered[srcChainId][nonce];
    }
}
