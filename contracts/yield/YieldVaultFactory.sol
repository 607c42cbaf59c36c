// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {YieldVault} from "./YieldVault.sol";

/**
 * @title YieldVaultFactory
 * @notice Deploys a merchant's set of branded yield vaults (one per token) in one transaction. Each vault is
 *         created with CREATE2 under a salt of the caller, the set id and the vault's index, so a set id can be
 *         deployed once per caller: a retried deployment transaction reverts with `VaultSetAlreadyDeployed`
 *         instead of making a second set, and nobody else can take (or block) the caller's addresses.
 */
contract YieldVaultFactory {
    struct VaultSpec {
        /// @notice The sUSDe vault the vault stakes in; its asset is the vault's asset.
        IERC4626 stakedVault;
        string name;
        string symbol;
    }

    event VaultSetDeployed(address indexed deployer, bytes32 indexed setId, address[] vaults);

    error EmptyVaultSet();
    error VaultSetAlreadyDeployed(address deployer, bytes32 setId);

    mapping(address deployer => mapping(bytes32 setId => address[] vaults)) private _vaultSets;

    /// @notice Deploys one vault per spec, in order, and returns their addresses.
    function deployVaultSet(bytes32 setId, VaultSpec[] calldata specs) external returns (address[] memory vaults) {
        if (specs.length == 0) revert EmptyVaultSet();
        if (_vaultSets[msg.sender][setId].length != 0) revert VaultSetAlreadyDeployed(msg.sender, setId);
        vaults = new address[](specs.length);
        for (uint256 i = 0; i < specs.length; i++) {
            vaults[i] = address(
                new YieldVault{salt: _salt(msg.sender, setId, i)}(specs[i].stakedVault, specs[i].name, specs[i].symbol)
            );
        }
        _vaultSets[msg.sender][setId] = vaults;
        emit VaultSetDeployed(msg.sender, setId, vaults);
    }

    /// @notice The vaults `deployer` deployed under `setId` (empty when it has not).
    function vaultSetOf(address deployer, bytes32 setId) external view returns (address[] memory) {
        return _vaultSets[deployer][setId];
    }

    function _salt(address deployer, bytes32 setId, uint256 index) private pure returns (bytes32) {
        return keccak256(abi.encode(deployer, setId, index));
    }
}
