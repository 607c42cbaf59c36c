// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {OFTAdapter} from "@layerzerolabs/oft-evm/contracts/OFTAdapter.sol";

/**
 * @title LocalUSDeOFTAdapter
 * @notice The USDe OFT on a local settlement chain of the real-protocol set: LayerZero's reference lockbox
 *         adapter from the npm package oft-evm over the local USDe, as Ethena's USDe OFT adapter is on Ethereum.
 *         USDe arriving from a layer-2 is unlocked from here. Never deployed outside local chains.
 */
contract LocalUSDeOFTAdapter is OFTAdapter {
    constructor(address usde, address lzEndpoint, address delegate)
        OFTAdapter(usde, lzEndpoint, delegate)
        Ownable(delegate)
    {}
}
