// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/**
 * @title TestCollectible
 * @notice Test fixture: an ERC-721 whose Transfer event has the ERC-20 Transfer's topic but another shape
 *         (the token id indexed, no data), which a deposit monitor must never take for a payment.
 */
contract TestCollectible is ERC721 {
    constructor() ERC721("Test Collectible", "TCOL") {}

    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }
}
