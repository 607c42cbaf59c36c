// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

interface IMintableToken {
    function mint(address to, uint256 amount) external;
}

/**
 * @title MintFanout
 * @notice Benchmark fixture: mints a local test stablecoin to many recipients in one transaction, so a
 *         block range full of Transfer logs (emitted by the token itself, as real payments are) takes
 *         hundreds of transactions instead of thousands.
 */
contract MintFanout {
    error LengthMismatch(uint256 recipients, uint256 amounts);

    function mintEach(IMintableToken token, address[] calldata recipients, uint256[] calldata amounts) external {
        if (recipients.length != amounts.length) revert LengthMismatch(recipients.length, amounts.length);
        for (uint256 i = 0; i < recipients.length; i++) {
            token.mint(recipients[i], amounts[i]);
        }
    }
}
