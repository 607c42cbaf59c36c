// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/**
 * @title ISettlementMessenger
 * @notice The cross-chain transport a {Forwarder} on a layer-2 chain sends USDe through: a LayerZero-style
 *         OFT send with a compose message. Local chains use `LocalMessenger` plus the dev relayer.
 * @dev `send` pulls `amount` USDe from the caller; on `dstChainId` the same amount reaches `to`, which is
 *      then called with {ISettlementComposer.compose} and `composeMsg`. Returns the packet's nonce, unique
 *      per source chain.
 */
interface ISettlementMessenger {
    function send(uint256 dstChainId, address to, uint256 amount, bytes calldata composeMsg)
        external
        returns (uint64 nonce);
}

/// @notice The receiving side of a composed packet on the destination chain.
interface ISettlementComposer {
    /// @dev Called by the messenger after it delivered `amount` USDe to this contract.
    function compose(uint256 srcChainId, uint64 nonce, uint256 amount, bytes calldata composeMsg) external;
}
