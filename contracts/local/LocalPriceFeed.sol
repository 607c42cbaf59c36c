// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/**
 * @title LocalPriceFeed
 * @notice Local stand-in for a Chainlink ETH/USD aggregator (8 decimals) on the dev and test chains.
 * @dev The owner sets the answer and its updatedAt. An updatedAt of 0 means "as fresh as the current
 *      block", so a long-running dev chain never goes stale by itself; tests pin an explicit updatedAt to
 *      make the price stale. Never deployed outside local chains; production feeds are configuration.
 */
contract LocalPriceFeed {
    uint8 public constant decimals = 8;
    string public constant description = "ETH / USD (local)";
    uint256 public constant version = 4;

    address public immutable owner;
    int256 private _answer;
    uint256 private _updatedAt;
    uint80 private _roundId;

    error NotOwner();

    constructor(address owner_, int256 answer_) {
        owner = owner_;
        _answer = answer_;
        _roundId = 1;
    }

    function setRoundData(int256 answer_, uint256 updatedAt_) external {
        if (msg.sender != owner) revert NotOwner();
        _answer = answer_;
        _updatedAt = updatedAt_;
        _roundId += 1;
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        uint256 at = _updatedAt == 0 ? block.timestamp : _updatedAt;
        return (_roundId, _answer, at, at, _roundId);
    }
}
