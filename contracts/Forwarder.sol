// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";

/**
 * @title Forwarder
 * @notice The deposit address of one payment session on one chain. Each instance is a minimal-proxy
 *         clone made by {ForwarderFactory} with OpenZeppelin's `Clones.cloneDeterministicWithImmutableArgs`;
 *         the clone's immutable arguments bind the merchant payout address and the session, so the
 *         address cannot be deployed for anybody else.
 * @dev Immutable argument layout, `abi.encodePacked(merchant, sessionId)`, 36 bytes:
 *      bytes [0, 20)  merchant payout address
 *      bytes [20, 36) session id (the session UUID as bytes16)
 *      Packed rather than `abi.encode` because the arguments are part of every clone's code and of the
 *      init code hashed into its CREATE2 address: 36 bytes instead of 64, and nothing to pad or validate.
 *      The off-chain twin of this layout is `predictDepositAddress` in chain/depositAddress.ts.
 *      Moving tokens out (flush) is added with settlement; this version only exposes its binding.
 */
contract Forwarder {
    /// @notice Length of the immutable arguments appended to every clone's code.
    uint256 public constant ARGS_LENGTH = 36;

    /// @dev The implementation's own address; in a clone (delegatecall) `address(this)` differs from it.
    address private immutable _self = address(this);

    /// @notice Thrown when the arguments are read from the implementation instead of a clone.
    error NotAClone();

    /// @notice The merchant payout address this deposit address forwards to.
    function merchant() external view returns (address merchant_) {
        (merchant_, ) = _cloneArgs();
    }

    /// @notice The payment session (UUID as bytes16) this deposit address belongs to.
    function sessionId() external view returns (bytes16 sessionId_) {
        (, sessionId_) = _cloneArgs();
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
