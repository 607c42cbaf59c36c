// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";

/**
 * @title ManagedPaymasterCore
 * @notice The EntryPoint-version-independent half of the managed paymaster: the `paymasterData`
 *         layout, the hash the off-chain signer signs, signature checking and the ERC-20 gas charge.
 *         {ManagedPaymasterV07} and {ManagedPaymasterV08} bind it to the BasePaymaster of their
 *         EntryPoint release; this contract imports nothing from account-abstraction, so the two
 *         releases' identically named types never meet in one source unit. Ownership comes from the
 *         binding's BasePaymaster (Ownable in 0.7.0, Ownable2Step in 0.8.0) through {_requireOwner}.
 *
 * paymasterData (the bytes after the 52-byte `paymaster | verificationGasLimit | postOpGasLimit` prefix):
 *
 *   mode (1) | validUntil (6) | validAfter (6) | [token (20) | exchangeRate (32)] | signature (65)
 *
 *   mode 0 (sponsored): 78 bytes; the paymaster's EntryPoint deposit pays and nothing is charged.
 *   mode 1 (erc20):    130 bytes; validation pre-charges the operation's maximum cost, converted at the
 *                      signed rate, from the sender with transferFrom (no allowance or balance: the
 *                      validation reverts and nothing is included); postOp keeps
 *                      ceil((actualGasCost + POSTOP_OVERHEAD_GAS × actualUserOpFeePerGas) × exchangeRate
 *                      / 1e18) token base units, never more than the pre-charge, and refunds the rest.
 *                      `exchangeRate` is the number of token base units one ether (1e18 wei) of gas is worth.
 *
 * A well-formed paymasterData whose signature does not recover to `verifyingSigner` validates with
 * SIG_VALIDATION_FAILED (so gas estimation with stub data works); malformed data reverts.
 */
abstract contract ManagedPaymasterCore {
    using SafeERC20 for IERC20;

    uint8 public constant MODE_SPONSORED = 0;
    uint8 public constant MODE_ERC20 = 1;

    uint256 internal constant SIGNATURE_LENGTH = 65;
    uint256 internal constant SPONSORED_DATA_LENGTH = 1 + 6 + 6 + SIGNATURE_LENGTH;
    uint256 internal constant ERC20_DATA_LENGTH = 1 + 6 + 6 + 20 + 32 + SIGNATURE_LENGTH;

    /// @notice Gas the ERC-20 postOp itself is assumed to use (its own cost is not in `actualGasCost`).
    uint256 public constant POSTOP_OVERHEAD_GAS = 45_000;
    /// @notice `exchangeRate` is token base units per this many wei (one ether).
    uint256 public constant EXCHANGE_RATE_SCALE = 1e18;

    /// @notice The key of the signing service; only its signatures authorize payment.
    address public verifyingSigner;

    struct SponsorshipTerms {
        uint8 mode;
        uint48 validUntil;
        uint48 validAfter;
        address token;
        uint256 exchangeRate;
    }

    event VerifyingSignerChanged(address indexed previousSigner, address indexed newSigner);
    /// @notice One per ERC-20-mode operation: what `sender` paid (`tokenAmount`, after the refund) and from which gas figures.
    event GasChargedInToken(
        bytes32 indexed userOpHash,
        address indexed sender,
        address indexed token,
        uint256 actualGasCost,
        uint256 actualUserOpFeePerGas,
        uint256 exchangeRate,
        uint256 tokenAmount
    );

    error UnsupportedPaymasterMode(uint8 mode);
    error InvalidPaymasterDataLength(uint8 mode, uint256 length);
    error ZeroToken();
    error ZeroVerifyingSigner();

    constructor(address verifyingSigner_) {
        _setVerifyingSigner(verifyingSigner_);
    }

    /// @notice Rotates the signing key (the old key's outstanding signatures stop validating at once).
    function setVerifyingSigner(address newSigner) external {
        _requireOwner();
        _setVerifyingSigner(newSigner);
    }

    /// @notice Sends collected ERC-20 gas payments to `to`.
    function withdrawToken(IERC20 token, address to, uint256 amount) external {
        _requireOwner();
        token.safeTransfer(to, amount);
    }

    /// @notice Splits `paymasterData` into its terms and signature; reverts when it is malformed.
    function parsePaymasterData(bytes calldata paymasterData)
        public
        pure
        returns (SponsorshipTerms memory terms, bytes calldata signature)
    {
        if (paymasterData.length == 0) revert InvalidPaymasterDataLength(0, 0);
        terms.mode = uint8(paymasterData[0]);
        if (terms.mode == MODE_SPONSORED) {
            if (paymasterData.length != SPONSORED_DATA_LENGTH) {
                revert InvalidPaymasterDataLength(terms.mode, paymasterData.length);
            }
        } else if (terms.mode == MODE_ERC20) {
            if (paymasterData.length != ERC20_DATA_LENGTH) {
                revert InvalidPaymasterDataLength(terms.mode, paymasterData.length);
            }
            terms.token = address(bytes20(paymasterData[13:33]));
            terms.exchangeRate = uint256(bytes32(paymasterData[33:65]));
            if (terms.token == address(0)) revert ZeroToken();
        } else {
            revert UnsupportedPaymasterMode(terms.mode);
        }
        terms.validUntil = uint48(bytes6(paymasterData[1:7]));
        terms.validAfter = uint48(bytes6(paymasterData[7:13]));
        signature = paymasterData[paymasterData.length - SIGNATURE_LENGTH:];
    }

    /// @notice Token base units charged for `gasCostWei` (rounded up), as the postOp computes it.
    function tokenAmountForGasCost(uint256 gasCostWei, uint256 exchangeRate) public pure returns (uint256) {
        return Math.mulDiv(gasCostWei, exchangeRate, EXCHANGE_RATE_SCALE, Math.Rounding.Ceil);
    }

    /**
     * @dev The signed hash: the user operation's fields except the paymaster's own data (which holds
     *      the signature), bound to this chain and this paymaster, and the sponsorship terms.
     *      `userOpFieldsHash` is {_hashUserOpFields} of the operation.
     */
    function _sponsorshipHash(bytes32 userOpFieldsHash, SponsorshipTerms memory terms)
        internal
        view
        returns (bytes32)
    {
        return keccak256(
            abi.encode(
                userOpFieldsHash,
                block.chainid,
                address(this),
                terms.mode,
                terms.validUntil,
                terms.validAfter,
                terms.token,
                terms.exchangeRate
            )
        );
    }

    /**
     * @dev `paymasterGasLimits` is paymasterAndData[20:52] (verification and postOp gas limits) as a uint256.
     *      `initCodeHash` is keccak256(initCode), except for an EIP-7702 operation on EntryPoint v0.8, where
     *      it is the EntryPoint's own override over the account's delegate (see {ManagedPaymasterV08}).
     */
    function _hashUserOpFields(
        address sender,
        uint256 nonce,
        bytes32 initCodeHash,
        bytes calldata callData,
        bytes32 accountGasLimits,
        uint256 paymasterGasLimits,
        uint256 preVerificationGas,
        bytes32 gasFees
    ) internal pure returns (bytes32) {
        return keccak256(
            abi.encode(
                sender,
                nonce,
                initCodeHash,
                keccak256(callData),
                accountGasLimits,
                paymasterGasLimits,
                preVerificationGas,
                gasFees
            )
        );
    }

    /**
     * @dev Checks the signer's signature over the terms and returns the EntryPoint's validation data
     *      (signature failure flag and the validity window). In ERC-20 mode it pre-charges `maxCost` (the
     *      EntryPoint's required prefund) in tokens at the signed rate, so the deposit never pays for an
     *      operation whose sender cannot pay: without allowance or balance the validation reverts. The
     *      pre-charge is taken whatever the signature (a failed signature fails the whole operation, the
     *      transfer with it), so estimation with stub data measures the real validation.
     */
    function _validateSponsorship(
        bytes32 userOpFieldsHash,
        bytes32 userOpHash,
        address sender,
        bytes calldata paymasterData,
        uint256 maxCost
    ) internal returns (bytes memory context, uint256 validationData) {
        (SponsorshipTerms memory terms, bytes calldata signature) = parsePaymasterData(paymasterData);
        bytes32 digest = MessageHashUtils.toEthSignedMessageHash(_sponsorshipHash(userOpFieldsHash, terms));
        (address recovered, ECDSA.RecoverError recoverError,) = ECDSA.tryRecoverCalldata(digest, signature);
        bool signatureFailed = recoverError != ECDSA.RecoverError.NoError || recovered != verifyingSigner;
        validationData = _encodeValidationData(signatureFailed, terms.validUntil, terms.validAfter);
        if (terms.mode == MODE_ERC20) {
            uint256 preCharge = tokenAmountForGasCost(maxCost, terms.exchangeRate);
            if (preCharge > 0) IERC20(terms.token).safeTransferFrom(sender, address(this), preCharge);
            context = abi.encode(userOpHash, sender, terms.token, terms.exchangeRate, preCharge);
        }
    }

    /**
     * @dev ERC-20 mode postOp: keeps the gas cost, converted at the signed rate, out of the pre-charge —
     *      never more than the pre-charge — and refunds the rest to the sender.
     */
    function _settleTokenCharge(bytes calldata context, uint256 actualGasCost, uint256 actualUserOpFeePerGas)
        internal
    {
        (bytes32 userOpHash, address sender, address token, uint256 exchangeRate, uint256 preCharge) =
            abi.decode(context, (bytes32, address, address, uint256, uint256));
        uint256 tokenAmount = Math.min(
            tokenAmountForGasCost(actualGasCost + POSTOP_OVERHEAD_GAS * actualUserOpFeePerGas, exchangeRate),
            preCharge
        );
        if (preCharge > tokenAmount) IERC20(token).safeTransfer(sender, preCharge - tokenAmount);
        emit GasChargedInToken(
            userOpHash, sender, token, actualGasCost, actualUserOpFeePerGas, exchangeRate, tokenAmount
        );
    }

    /// @dev The EntryPoint's validationData: sigFailed (bit 0) | validUntil << 160 | validAfter << 208.
    function _encodeValidationData(bool signatureFailed, uint48 validUntil, uint48 validAfter)
        internal
        pure
        returns (uint256)
    {
        return (signatureFailed ? 1 : 0) | (uint256(validUntil) << 160) | (uint256(validAfter) << 208);
    }

    /// @dev Reverts unless the caller owns the paymaster.
    function _requireOwner() internal view virtual;

    function _setVerifyingSigner(address newSigner) private {
        if (newSigner == address(0)) revert ZeroVerifyingSigner();
        emit VerifyingSignerChanged(verifyingSigner, newSigner);
        verifyingSigner = newSigner;
    }
}
