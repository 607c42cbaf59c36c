// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {OptionsBuilder} from "@layerzerolabs/oapp-evm/contracts/oapp/libs/OptionsBuilder.sol";
import {
    IOFT,
    MessagingFee,
    MessagingReceipt,
    OFTReceipt,
    SendParam
} from "@layerzerolabs/oft-evm/contracts/interfaces/IOFT.sol";
import {ISettlementMessenger} from "../interfaces/ISettlementMessenger.sol";

/**
 * @title LayerZeroSettlementMessenger
 * @notice The {ISettlementMessenger} over USDe's LayerZero OFT: `send` is the OFT's `send` with a compose message
 *         for the settlement chain's `LayerZeroStakingComposer`, which stakes the USDe into sUSDe for the merchant
 *         when the packet arrives.
 * @dev What a route needs is the owner's configuration per destination chain: its LayerZero endpoint id and the
 *      executor gas for `lzReceive` (0 when the OFT's enforced options already carry it) and for `lzCompose`.
 *      The OFT carries amounts in shared decimals, so `send` takes only the part of `amount` the OFT can carry
 *      (the rest, under one shared-decimal unit, stays with the caller) and asks the OFT for at least exactly
 *      that (`minAmountLD`), so an OFT that took a cut would revert instead of delivering less.
 *      The native fee is `msg.value`, all of it offered to the endpoint; its surplus goes to `refundAddress`.
 *      Holds nothing between calls.
 */
contract LayerZeroSettlementMessenger is ISettlementMessenger, Ownable2Step {
    using OptionsBuilder for bytes;
    using SafeERC20 for IERC20;

    struct Route {
        uint32 eid;
        uint128 receiveGas;
        uint128 composeGas;
    }

    /// @notice The USDe OFT on this chain (on a layer-2 the USDe token itself).
    IOFT public immutable oft;
    /// @notice The token the OFT carries (USDe).
    IERC20 public immutable token;
    /// @notice 10^(local decimals − shared decimals): amounts are carried in multiples of this.
    uint256 public immutable decimalConversionRate;

    mapping(uint256 chainId => Route) private _routes;

    event RouteSet(uint256 indexed chainId, uint32 eid, uint128 receiveGas, uint128 composeGas);
    /// @notice USDe left for `dstChainId`: `guid` identifies the packet everywhere, `nonce` on its path.
    event Sent(uint256 indexed dstChainId, bytes32 indexed guid, uint64 nonce, uint256 amount, uint256 nativeFee);

    /// @notice No route is configured for this destination chain.
    error UnknownRoute(uint256 chainId);
    /// @notice The amount is below one unit the OFT can carry.
    error AmountTooSmall(uint256 amount, uint256 unit);
    error InvalidRoute();

    constructor(IOFT oft_, address owner_) Ownable(owner_) {
        oft = oft_;
        token = IERC20(oft_.token());
        decimalConversionRate = 10 ** (IERC20Metadata(address(token)).decimals() - oft_.sharedDecimals());
    }

    /// @notice Sets how packets reach `chainId`: its endpoint id and the executor gas of the two calls there.
    function setRoute(uint256 chainId, Route calldata route) external onlyOwner {
        if (route.eid == 0 || route.composeGas == 0) revert InvalidRoute();
        _routes[chainId] = route;
        emit RouteSet(chainId, route.eid, route.receiveGas, route.composeGas);
    }

    /// @notice The route to `chainId` (all zero when there is none).
    function routeOf(uint256 chainId) external view returns (Route memory) {
        return _routes[chainId];
    }

    /// @inheritdoc ISettlementMessenger
    function quoteSend(uint256 dstChainId, address to, uint256 amount, bytes calldata composeMsg)
        external
        view
        returns (uint256 nativeFee)
    {
        return oft.quoteSend(_sendParam(dstChainId, to, _carried(amount), composeMsg), false).nativeFee;
    }

    /// @inheritdoc ISettlementMessenger
    function send(
        uint256 dstChainId,
        address to,
        uint256 amount,
        bytes calldata composeMsg,
        address refundAddress
    ) external payable returns (uint64 nonce, uint256 amountSent) {
        uint256 carried = _carried(amount);
        if (carried == 0) revert AmountTooSmall(amount, decimalConversionRate);
        token.safeTransferFrom(msg.sender, address(this), carried);
        if (oft.approvalRequired()) token.forceApprove(address(oft), carried);
        (MessagingReceipt memory message, OFTReceipt memory receipt) = oft.send{value: msg.value}(
            _sendParam(dstChainId, to, carried, composeMsg),
            MessagingFee(msg.value, 0),
            refundAddress
        );
        emit Sent(dstChainId, message.guid, message.nonce, receipt.amountReceivedLD, message.fee.nativeFee);
        return (message.nonce, receipt.amountSentLD);
    }

    function _carried(uint256 amount) private view returns (uint256) {
        return (amount / decimalConversionRate) * decimalConversionRate;
    }

    function _sendParam(uint256 dstChainId, address to, uint256 amount, bytes calldata composeMsg)
        private
        view
        returns (SendParam memory)
    {
        Route memory route = _routes[dstChainId];
        if (route.eid == 0) revert UnknownRoute(dstChainId);
        bytes memory options = OptionsBuilder.newOptions();
        if (route.receiveGas != 0) options = options.addExecutorLzReceiveOption(route.receiveGas, 0);
        options = options.addExecutorLzComposeOption(0, route.composeGas, 0);
        return SendParam({
            dstEid: route.eid,
            to: bytes32(uint256(uint160(to))),
            amountLD: amount,
            minAmountLD: amount,
            extraOptions: options,
            composeMsg: composeMsg,
            oftCmd: ""
        });
    }
}
