// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.28;

import {BasePaymaster} from "@account-abstraction/contracts/core/BasePaymaster.sol";
import {Eip7702Support} from "@account-abstraction/contracts/core/Eip7702Support.sol";
import {IEntryPoint} from "@account-abstraction/contracts/interfaces/IEntryPoint.sol";
import {PackedUserOperation} from "@account-abstraction/contracts/interfaces/PackedUserOperation.sol";
import {ManagedPaymasterCore} from "./ManagedPaymasterCore.sol";

/**
 * @title ManagedPaymasterV08
 * @notice The managed paymaster for EntryPoint v0.8 (`@account-abstraction/contracts` 0.8.0):
 *         verifying mode and ERC-20 mode, see {ManagedPaymasterCore} for the data layout.
 *         An EIP-7702 operation (initCode starting with the 0x7702 marker) is signed over the account's
 *         delegate as the EntryPoint hashes it — read from the sender's code, not taken from the
 *         signer's caller — so data signed for one delegate never validates under another.
 * @dev Ownership is given to `owner_`, not to the deployer, so deployment through the
 *      deterministic CREATE2 deployer leaves it with the operator.
 */
contract ManagedPaymasterV08 is BasePaymaster, ManagedPaymasterCore {
    uint256 private constant PAYMASTER_GAS_LIMITS_OFFSET = 20;
    uint256 private constant PAYMASTER_DATA_START = 52;

    constructor(IEntryPoint entryPoint_, address owner_, address verifyingSigner_)
        BasePaymaster(entryPoint_)
        ManagedPaymasterCore(verifyingSigner_)
    {
        _transferOwnership(owner_);
    }

    /// @notice The hash the signing service signs (EIP-191 personal message) for `userOp` and these terms.
    function getHash(
        PackedUserOperation calldata userOp,
        uint48 validUntil,
        uint48 validAfter,
        uint8 mode,
        address token,
        uint256 exchangeRate
    ) external view returns (bytes32) {
        return _sponsorshipHash(
            _hashUserOpFields(userOp), SponsorshipTerms(mode, validUntil, validAfter, token, exchangeRate)
        );
    }

    function _validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 maxCost)
        internal
        override
        returns (bytes memory context, uint256 validationData)
    {
        return _validateSponsorship(
            _hashUserOpFields(userOp),
            userOpHash,
            userOp.sender,
            userOp.paymasterAndData[PAYMASTER_DATA_START:],
            maxCost
        );
    }

    function _postOp(PostOpMode, bytes calldata context, uint256 actualGasCost, uint256 actualUserOpFeePerGas)
        internal
        override
    {
        _settleTokenCharge(context, actualGasCost, actualUserOpFeePerGas);
    }

    function _requireOwner() internal view override {
        _checkOwner();
    }

    /// @dev keccak256(initCode), or for an EIP-7702 operation the EntryPoint's hash over the sender's delegate.
    function _initCodeHash(PackedUserOperation calldata userOp) private view returns (bytes32) {
        if (Eip7702Support._isEip7702InitCode(userOp.initCode)) {
            return Eip7702Support._getEip7702InitCodeHashOverride(userOp);
        }
        return keccak256(userOp.initCode);
    }

    function _hashUserOpFields(PackedUserOperation calldata userOp) private view returns (bytes32) {
        return _hashUserOpFields(
            userOp.sender,
            userOp.nonce,
            _initCodeHash(userOp),
            userOp.callData,
            userOp.accountGasLimits,
            uint256(bytes32(userOp.paymasterAndData[PAYMASTER_GAS_LIMITS_OFFSET:PAYMASTER_DATA_START])),
            userOp.preVerificationGas,
            userOp.gasFees
        );
    }
}
