// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {Forwarder} from "./Forwarder.sol";

/**
 * @title ForwarderFactory
 * @notice Deploys the per-session, per-chain deposit addresses ({Forwarder} clones).
 * @dev Address of a forwarder = CREATE2(this factory, salt, clone init code) with
 *      salt = keccak256(abi.encode(sessionId, block.chainid)) and the clone's immutable arguments
 *      abi.encodePacked(merchant, sessionId) (see {Forwarder}). The constructor takes no arguments and
 *      deploys its own implementation, so the deterministic CREATE2 deployer puts the factory (and,
 *      through CREATE at nonce 1, the implementation) at the same addresses on every chain.
 */
contract ForwarderFactory {
    /// @notice The {Forwarder} implementation every clone delegates to.
    address public immutable implementation;

    /// @notice Emitted once per forwarder, when its clone is created.
    event ForwarderDeployed(bytes16 indexed sessionId, address indexed merchant, address forwarder);

    /// @notice Thrown for the zero merchant address: nothing could ever be forwarded there.
    error ZeroMerchant();

    constructor() {
        implementation = address(new Forwarder());
    }

    /**
     * @notice Deploys the forwarder of `sessionId` on this chain, bound to `merchant`, and returns its address.
     * @dev Idempotent: when code already exists at the address it is returned and nothing is emitted.
     */
    function deploy(bytes16 sessionId, address merchant) external returns (address forwarder) {
        bytes memory args = _args(sessionId, merchant);
        bytes32 salt = _salt(sessionId);
        forwarder = Clones.predictDeterministicAddressWithImmutableArgs(implementation, args, salt);
        if (forwarder.code.length != 0) return forwarder;
        Clones.cloneDeterministicWithImmutableArgs(implementation, args, salt);
        emit ForwarderDeployed(sessionId, merchant, forwarder);
    }

    /// @notice The address {deploy} creates (or created) for `sessionId` and `merchant` on this chain.
    function predict(bytes16 sessionId, address merchant) external view returns (address) {
        return Clones.predictDeterministicAddressWithImmutableArgs(implementation, _args(sessionId, merchant), _salt(sessionId));
    }

    function _args(bytes16 sessionId, address merchant) private pure returns (bytes memory) {
        if (merchant == address(0)) revert ZeroMerchant();
        return abi.encodePacked(merchant, sessionId);
    }

    function _salt(bytes16 sessionId) private view returns (bytes32) {
        return keccak256(abi.encode(sessionId, block.chainid));
    }
}
