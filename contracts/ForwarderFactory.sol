// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {Forwarder} from "./Forwarder.sol";
import {IForwarderFactory} from "./interfaces/IForwarderFactory.sol";

/**
 * @title ForwarderFactory
 * @notice Deploys the per-session, per-chain deposit addresses ({Forwarder} clones) and holds the chain's
 *         settlement configuration the clones read when they are flushed.
 * @dev Address of a forwarder = CREATE2(this factory, salt, clone init code) with
 *      salt = keccak256(abi.encode(sessionId, block.chainid)) and the clone's immutable arguments
 *      abi.encodePacked(merchant, sessionId) (see {Forwarder}). The constructor takes only the owner and
 *      deploys its own implementation, so the deterministic CREATE2 deployer puts the factory (and,
 *      through CREATE at nonce 1, the implementation) at the same addresses on every chain that has the
 *      same owner. The settlement configuration differs per chain and is therefore set after deployment.
 */
contract ForwarderFactory is IForwarderFactory, Ownable2Step {
    uint256 private constant BPS = 10_000;

    /// @notice The {Forwarder} implementation every clone delegates to.
    address public immutable implementation;

    Settlement private _settlement;

    /// @notice Emitted once per forwarder, when its clone is created.
    event ForwarderDeployed(bytes16 indexed sessionId, address indexed merchant, address forwarder);

    /// @notice Emitted whenever the owner replaces the settlement configuration.
    event SettlementConfigured(Settlement settlement);

    /// @notice Thrown for the zero merchant address: nothing could ever be forwarded there.
    error ZeroMerchant();

    /// @notice The settlement configuration given to {setSettlement} cannot work on this chain; `reason` says why.
    error InvalidSettlement(string reason);

    constructor(address owner_) Ownable(owner_) {
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

    /// @inheritdoc IForwarderFactory
    function settlement() external view returns (Settlement memory) {
        return _settlement;
    }

    /**
     * @notice Replaces the settlement configuration every forwarder of this factory uses from now on.
     * @dev Checks what this chain needs: an operator, router and USDe always; on the settlement chain an
     *      sUSDe vault over that USDe; elsewhere a messenger and the composer on the settlement chain.
     */
    function setSettlement(Settlement calldata config) external onlyOwner {
        if (config.operator == address(0)) revert InvalidSettlement("operator is zero");
        if (config.swapRouter == address(0)) revert InvalidSettlement("swapRouter is zero");
        if (config.usde == address(0)) revert InvalidSettlement("usde is zero");
        if (config.settlementChainId == 0) revert InvalidSettlement("settlementChainId is zero");
        if (config.maxSlippageBps > BPS) revert InvalidSettlement("maxSlippageBps above 10000");
        if (block.chainid == config.settlementChainId) {
            if (config.stakedUsde == address(0)) revert InvalidSettlement("stakedUsde is zero");
            if (IERC4626(config.stakedUsde).asset() != config.usde) revert InvalidSettlement("stakedUsde is not a vault of usde");
        } else {
            if (config.messenger == address(0)) revert InvalidSettlement("messenger is zero");
            if (config.settlementComposer == address(0)) revert InvalidSettlement("settlementComposer is zero");
        }
        _settlement = config;
        emit SettlementConfigured(config);
    }

    function _args(bytes16 sessionId, address merchant) private pure returns (bytes memory) {
        if (merchant == address(0)) revert ZeroMerchant();
        return abi.encodePacked(merchant, sessionId);
    }

    function _salt(bytes16 sessionId) private view returns (bytes32) {
        return keccak256(abi.encode(sessionId, block.chainid));
    }
}
