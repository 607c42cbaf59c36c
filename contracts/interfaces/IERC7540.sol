// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/**
 * @title ERC-7540 (asynchronous ERC-4626 redemption) and ERC-7575, as far as the yield vault implements them.
 * @notice Declared here so `type(I).interfaceId` yields the ERC-165 identifiers the EIPs publish
 *         (operator 0xe3bc4e65, redeem 0x620ee8e4, ERC-7575 0x2f0a18c5); test/yield checks them against those
 *         constants.
 */
interface IERC7540Operator {
    event OperatorSet(address indexed controller, address indexed operator, bool approved);

    function setOperator(address operator, bool approved) external returns (bool);

    function isOperator(address controller, address operator) external view returns (bool);
}

interface IERC7540Redeem {
    event RedeemRequest(
        address indexed controller, address indexed owner, uint256 indexed requestId, address sender, uint256 shares
    );

    function requestRedeem(uint256 shares, address controller, address owner) external returns (uint256 requestId);

    function pendingRedeemRequest(uint256 requestId, address controller) external view returns (uint256 shares);

    function claimableRedeemRequest(uint256 requestId, address controller) external view returns (uint256 shares);
}

interface IERC7575 {
    function share() external view returns (address);
}
