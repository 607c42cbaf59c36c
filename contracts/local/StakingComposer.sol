// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC4626} from "@openzeppelin/contracts/interfaces/IERC4626.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ISettlementComposer} from "../interfaces/ISettlementMessenger.sol";

/**
 * @title StakingComposer
 * @notice On the settlement chain: receives USDe bridged from a layer-2 {Forwarder} and stakes it into sUSDe
 *         for the merchant named in the compose message, in the same delivery.
 * @dev The compose message is `abi.encode(address merchant, bytes16 sessionId)`. Only the messenger may call
 *      {compose}, and it does so right after delivering `amount` USDe here.
 *      Anyone can send their own USDe to this composer with any compose message (that only gives a merchant
 *      sUSDe), so an off-chain reader must match a delivery by (srcChainId, nonce) of the forwarder's
 *      `Flushed` event, never by session id alone.
 */
contract StakingComposer is ISettlementComposer {
    using SafeERC20 for IERC20;

    address public immutable messenger;
    address public immutable stakedUsde;

    event Composed(
        bytes16 indexed sessionId,
        address indexed merchant,
        uint256 srcChainId,
        uint64 nonce,
        uint256 usdeAmount,
        uint256 shares
    );

    error NotMessenger();

    constructor(address messenger_, address stakedUsde_) {
        messenger = messenger_;
        stakedUsde = stakedUsde_;
    }

    /// @inheritdoc ISettlementComposer
    function compose(uint256 srcChainId, uint64 nonce, uint256 amount, bytes calldata composeMsg) external {
        if (msg.sender != messenger) revert NotMessenger();
        (address merchant, bytes16 sessionId) = abi.decode(composeMsg, (address, bytes16));
        IERC20(IERC4626(stakedUsde).asset()).forceApprove(stakedUsde, amount);
        uint256 shares = IERC4626(stakedUsde).deposit(amount, merchant);
        emit Composed(sessionId, merchant, srcChainId, nonce, amount, shares);
    }
}
