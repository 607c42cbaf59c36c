// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ILayerZeroComposer} from "@layerzerolabs/lz-evm-protocol-v2/contracts/interfaces/ILayerZeroComposer.sol";
import {IOFT} from "@layerzerolabs/oft-evm/contracts/interfaces/IOFT.sol";
import {OFTComposeMsgCodec} from "@layerzerolabs/oft-evm/contracts/libs/OFTComposeMsgCodec.sol";

/**
 * @title LayerZeroStakingComposer
 * @notice On the settlement chain: receives USDe bridged by a layer-2 {Forwarder} through the USDe OFT and, in
 *         `lzCompose`, stakes exactly the delivered amount into sUSDe (ERC-4626 `deposit(assets, receiver)`) for
 *         the merchant named in the compose message.
 * @dev Only the LayerZero endpoint may call `lzCompose`, and only for a compose the USDe OFT queued (`_from`):
 *      the OFT credits the USDe here in `lzReceive` and queues `OFTComposeMsgCodec.encode(nonce, srcEid,
 *      amountLD, composeFrom ‖ composeMsg)`, our part being `abi.encode(merchant, sessionId)`.
 *      When staking reverts (sUSDe paused, the composer or merchant restricted), the whole compose reverts: the
 *      USDe stays here and the message stays queued at the endpoint, so `endpoint.lzCompose` with the same
 *      arguments stakes it later, for anyone who calls it (the worker does, see activities/settlement.ts).
 *      Anyone may bridge their own USDe here with any compose message (that only gives a merchant sUSDe), so an
 *      off-chain reader matches a delivery by its `guid` (source endpoint, OFT and nonce), never by session id.
 */
contract LayerZeroStakingComposer is ILayerZeroComposer {
    using SafeERC20 for IERC20;

    /// @notice The LayerZero EndpointV2 of this chain.
    address public immutable endpoint;
    /// @notice The USDe OFT of this chain (on Ethereum, Ethena's OFT adapter over USDe).
    address public immutable oft;
    /// @notice The sUSDe vault; its asset is the OFT's token.
    IERC4626 public immutable stakedUsde;

    event Composed(
        bytes32 indexed guid,
        bytes16 indexed sessionId,
        address indexed merchant,
        uint32 srcEid,
        uint64 nonce,
        uint256 usdeAmount,
        uint256 shares
    );

    error NotEndpoint();
    error UntrustedOft(address from);
    error VaultAssetMismatch();

    constructor(address endpoint_, address oft_, IERC4626 stakedUsde_) {
        if (stakedUsde_.asset() != IOFT(oft_).token()) revert VaultAssetMismatch();
        endpoint = endpoint_;
        oft = oft_;
        stakedUsde = stakedUsde_;
    }

    /// @inheritdoc ILayerZeroComposer
    function lzCompose(address _from, bytes32 _guid, bytes calldata _message, address, bytes calldata)
        external
        payable
    {
        if (msg.sender != endpoint) revert NotEndpoint();
        if (_from != oft) revert UntrustedOft(_from);
        uint256 amount = OFTComposeMsgCodec.amountLD(_message);
        (address merchant, bytes16 sessionId) = abi.decode(OFTComposeMsgCodec.composeMsg(_message), (address, bytes16));
        IERC20(stakedUsde.asset()).forceApprove(address(stakedUsde), amount);
        uint256 shares = stakedUsde.deposit(amount, merchant);
        emit Composed(
            _guid,
            sessionId,
            merchant,
            OFTComposeMsgCodec.srcEid(_message),
            OFTComposeMsgCodec.nonce(_message),
            amount,
            shares
        );
    }
}
