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

/// @notice ERC-7575's vault interface (ERC-4626 without ERC-20, plus `share`), for its ERC-165 identifier; the
///         yield vault implements it through OpenZeppelin's ERC4626 and so does not inherit it.
interface IERC7575 {
    function asset() external view returns (address);
    function share() external view returns (address);
    function convertToShares(uint256 assets) external view returns (uint256);
    function convertToAssets(uint256 shares) external view returns (uint256);
    function totalAssets() external view returns (uint256);
    function maxDeposit(address receiver) external view returns (uint256);
    function previewDeposit(uint256 assets) external view returns (uint256);
    function deposit(uint256 assets, address receiver) external returns (uint256);
    function maxMint(address receiver) external view returns (uint256);
    function previewMint(uint256 shares) external view returns (uint256);
    function mint(uint256 shares, address receiver) external returns (uint256);
    function maxWithdraw(address owner) external view returns (uint256);
    function previewWithdraw(uint256 assets) external view returns (uint256);
    function withdraw(uint256 assets, address receiver, address owner) external returns (uint256);
    function maxRedeem(address owner) external view returns (uint256);
    function previewRedeem(uint256 shares) external view returns (uint256);
    function redeem(uint256 shares, address receiver, address owner) external returns (uint256);
}
