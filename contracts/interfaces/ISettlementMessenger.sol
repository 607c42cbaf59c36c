// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/**
 * @title ISettlementMessenger
 * @notice The cross-chain transport a {Forwarder} on a layer-2 chain sends USDe through: an OFT send with a
 *         compose message. Production uses `LayerZeroSettlementMessenger` over the USDe OFT; local fast tests
 *         use `LocalMessenger` plus the dev relayer.
 * @dev `send` pulls at most `amount` USDe from the caller (a transport may only carry amounts it can represent
 *      on the other side, e.g. an OFT's shared decimals) and returns what it pulled. On `dstChainId` that
 *      amount reaches `to`, which is then handed `composeMsg`. The native fee is `msg.value`; whatever the
 *      transport does not need goes back to `refundAddress`. Returns the packet's nonce, unique per source
 *      chain and destination.
 */
interface ISettlementMessenger {
    /// @notice The native fee `send` needs for the same arguments, in wei.
    function quoteSend(uint256 dstChainId, address to, uint256 amount, bytes calldata composeMsg)
        external
        view
        returns (uint256 nativeFee);

    function send(
        uint256 dstChainId,
        address to,
        uint256 amount,
        bytes calldata composeMsg,
        address refundAddress
    ) external payable returns (uint64 nonce, uint256 amountSent);
}

/// @notice The receiving side of a packet of the local stand-in messenger on the destination chain.
interface ISettlementComposer {
    /// @dev Called by the messenger after it delivered `amount` USDe to this contract.
    function compose(uint256 srcChainId, uint64 nonce, uint256 amount, bytes calldata composeMsg) external;
}
