import { type Address, type Hex, parseAbi } from 'viem';

/**
 * ERC-4337 EntryPoint v0.7 and v0.8, deployed from the `@account-abstraction/contracts` npm artifacts
 * (0.7.0 under the alias `@account-abstraction/contracts-v07`, and 0.8.0) through the deterministic
 * deployer with the canonical salts. Both artifacts land at the canonical mainnet addresses.
 */

export const ENTRY_POINT_V07_SALT: Hex = '0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3';
export const ENTRY_POINT_V07_ADDRESS: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';

export const ENTRY_POINT_V08_SALT: Hex = '0x0a59dbff790c23c976a548690c27297883cc66b4c67024f9117b0238995e35e9';
/** Canonical v0.8 address; the 0.8.0 npm artifact's init code with the canonical salt lands exactly here. */
export const ENTRY_POINT_V08_ADDRESS: Address = '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108';

/** The part of the EntryPoint interface callers use; identical in v0.7 and v0.8. */
export const entryPointAbi = parseAbi([
  'function balanceOf(address account) view returns (uint256)',
  'function depositTo(address account) payable',
  'function withdrawTo(address withdrawAddress, uint256 withdrawAmount)',
  'function addStake(uint32 unstakeDelaySec) payable',
  'function getDepositInfo(address account) view returns ((uint256 deposit, bool staked, uint112 stake, uint32 unstakeDelaySec, uint48 withdrawTime) info)',
  'function getNonce(address sender, uint192 key) view returns (uint256 nonce)',
  'function getUserOpHash((address sender, uint256 nonce, bytes initCode, bytes callData, bytes32 accountGasLimits, uint256 preVerificationGas, bytes32 gasFees, bytes paymasterAndData, bytes signature) userOp) view returns (bytes32)',
  'event Deposited(address indexed account, uint256 totalDeposit)',
  'event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)',
]);

export type EntryPointVersion = '0.7' | '0.8';
