// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {CappedForwarder} from "./CappedForwarder.sol";
import {IForwarderFactory} from "./interfaces/IForwarderFactory.sol";

/**
 * @title CappedForwarderFactory
 * @notice Deploys the deposit addresses of sessions that hold an overpayment ({CappedForwarder} clones), beside
 *         the chain's {ForwarderFactory}, whose settlement configuration its clones use: one operator, router and
 *         vault for both kinds, set in one place by its owner. This factory has no owner and no state.
 * @dev Address of a capped forwarder = CREATE2(this factory, salt, clone init code), salt =
 *      keccak256(abi.encode(sessionId, block.chainid)) as in ForwarderFactory, immutable arguments
 *      abi.encodePacked(merchant, sessionId, capMicroUsd). Deployed through the deterministic deployer with the
 *      base factory as its only constructor argument, so its address follows from the base factory's.
 */
contract CappedForwarderFactory is IForwarderFactory {
    /// @notice The {CappedForwarder} implementation every clone delegates to.
    address public immutable implementation;

    /// @notice The chain's {ForwarderFactory}: the settlement configuration's one source.
    IForwarderFactory public immutable base;

    /// @notice Emitted once per forwarder, when its clone is created.
    event ForwarderDeployed(bytes16 indexed sessionId, address indexed merchant, address forwarder, uint64 capMicroUsd);

    /// @notice Thrown for the zero merchant address: nothing could ever be forwarded there.
    error ZeroMerchant();
    /// @notice A cap of 0 would let no flush through; an uncapped session uses the base factory.
    error ZeroCap();
    /// @notice The base factory is the zero address.
    error ZeroBase();

    constructor(IForwarderFactory base_) {
        if (address(base_) == address(0)) revert ZeroBase();
        base = base_;
        implementation = address(new CappedForwarder());
    }

    /**
     * @notice Deploys the capped forwarder of `sessionId` on this chain, bound to `merchant` and `capMicroUsd`.
     * @dev Idempotent: when code already exists at the address it is returned and nothing is emitted.
     */
    function deploy(bytes16 sessionId, address merchant, uint64 capMicroUsd) external returns (address forwarder) {
        bytes memory args = _args(sessionId, merchant, capMicroUsd);
        bytes32 salt = _salt(sessionId);
        forwarder = Clones.predictDeterministicAddressWithImmutableArgs(implementation, args, salt);
        if (forwarder.code.length != 0) return forwarder;
        Clones.cloneDeterministicWithImmutableArgs(implementation, args, salt);
        emit ForwarderDeployed(sessionId, merchant, forwarder, capMicroUsd);
    }

    /// @notice The address {deploy} creates (or created) for these arguments on this chain.
    function predict(bytes16 sessionId, address merchant, uint64 capMicroUsd) external view returns (address) {
        return Clones.predictDeterministicAddressWithImmutableArgs(
            implementation, _args(sessionId, merchant, capMicroUsd), _salt(sessionId)
        );
    }

    /// @inheritdoc IForwarderFactory
    function settlement() external view returns (Settlement memory) {
        return base.settlement();
    }

    function _args(bytes16 sessionId, address merchant, uint64 capMicroUsd) private pure returns (bytes memory) {
        if (merchant == address(0)) revert ZeroMerchant();
        if (capMicroUsd == 0) revert ZeroCap();
        return abi.encodePacked(merchant, sessionId, capMicroUsd);
    }

    function _salt(bytes16 sessionId) private view returns (bytes32) {
        return keccak256(abi.encode(sessionId, block.chainid));
    }
}
