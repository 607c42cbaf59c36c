// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/**
 * @title OwnedContractWallet
 * @notice Test fixture: a minimal smart-contract wallet that validates ERC-1271 signatures of its owner,
 *         used to prove that wallet login accepts contract wallets (deployed: ERC-1271; counterfactual: ERC-6492).
 */
contract OwnedContractWallet is IERC1271 {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address recovered, ECDSA.RecoverError error_, ) = ECDSA.tryRecover(hash, signature);
        return error_ == ECDSA.RecoverError.NoError && recovered == owner ? IERC1271.isValidSignature.selector : bytes4(0xffffffff);
    }
}

/// @notice Deploys {OwnedContractWallet}s with CREATE2, so a wallet can sign before it exists (ERC-6492).
contract OwnedContractWalletFactory {
    function deploy(address owner, bytes32 salt) external returns (address wallet) {
        wallet = predict(owner, salt);
        if (wallet.code.length == 0) new OwnedContractWallet{salt: salt}(owner);
    }

    function predict(address owner, bytes32 salt) public view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(OwnedContractWallet).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, initCodeHash)))));
    }
}
