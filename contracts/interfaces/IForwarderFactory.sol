// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/**
 * @title IForwarderFactory
 * @notice What a {Forwarder} clone asks its factory: the chain's settlement configuration.
 */
interface IForwarderFactory {
    /**
     * @notice How deposits on this chain reach the merchant as sUSDe.
     * @param operator the only account that may call `Forwarder.flush` (the worker's hot key)
     * @param swapRouter the {ISwapRouter} adapter that sells USDC/USDT for USDe
     * @param usde the USDe token on this chain
     * @param stakedUsde the sUSDe ERC-4626 vault on this chain (used when this is the settlement chain)
     * @param messenger the {ISettlementMessenger} (used when this is not the settlement chain)
     * @param settlementChainId the chain where USDe is staked into sUSDe for the merchant
     * @param settlementComposer the composer on the settlement chain that stakes bridged USDe for the merchant
     *        (`LayerZeroStakingComposer` behind the USDe OFT; `StakingComposer` behind the local stand-in)
     * @param maxSlippageBps how far below par (1 stablecoin = 1 USDe) a swap may settle, in basis points
     */
    struct Settlement {
        address operator;
        address swapRouter;
        address usde;
        address stakedUsde;
        address messenger;
        uint256 settlementChainId;
        address settlementComposer;
        uint16 maxSlippageBps;
    }

    /// @notice The {Forwarder} implementation every clone delegates to.
    function implementation() external view returns (address);

    /// @notice The current settlement configuration (all zero until the owner sets it).
    function settlement() external view returns (Settlement memory);
}
