// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {OFT} from "@layerzerolabs/oft-evm/contracts/OFT.sol";

/**
 * @title LocalUSDeOFT
 * @notice USDe on a local layer-2 of the real-protocol set: LayerZero's reference OFT (npm package oft-evm),
 *         as Ethena's USDe is on Base and Arbitrum, plus the open `mint` every local test token has (so a session
 *         can be paid in USDe by hand). Never deployed outside local chains.
 */
contract LocalUSDeOFT is OFT {
    constructor(address lzEndpoint, address delegate)
        OFT("USDe (local OFT)", "USDe", lzEndpoint, delegate)
        Ownable(delegate)
    {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
