import { ERC1967Proxy } from '@metamask/delegation-abis/bytecode';
import {
  type Address,
  type Hex,
  type LocalAccount,
  encodeAbiParameters,
  encodeFunctionData,
  getContractAddress,
  parseAbi,
  pad,
  toHex,
} from 'viem';
import { type UserOperation, toPackedUserOperation } from 'viem/account-abstraction';
import type { DelegationFrameworkContracts } from './delegationFramework';
import { SINGLE_DEFAULT_MODE, encodeSingleExecution } from './delegations';

/**
 * HybridDeleGator smart accounts (MetaMask's Delegation Framework): an ERC-1967 proxy of the
 * HybridDeleGator implementation, created with CREATE2 by the framework's SimpleFactory and owned by
 * one EOA. As a delegator it signs delegations through ERC-1271 (the owner's ECDSA signature over the
 * typed-data digest); as an ERC-4337 sender (EntryPoint v0.7) it validates an EIP-712 signature of
 * its owner over the packed user operation.
 */

export const hybridDeleGatorAbi = parseAbi([
  'function initialize(address owner, string[] keyIds, uint256[] xValues, uint256[] yValues)',
  'function execute(bytes32 mode, bytes executionCalldata) payable',
  'function owner() view returns (address)',
  'function delegationManager() view returns (address)',
  'function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)',
]);

export const simpleFactoryAbi = parseAbi(['function deploy(bytes bytecode, bytes32 salt) returns (address)']);

export interface HybridDeleGatorAccount {
  address: Address;
  owner: Address;
  /** initCode parts of the operation (or the factory call) that creates the account. */
  factory: Address;
  factoryData: Hex;
}

export interface HybridDeleGatorAccountParameters {
  owner: Address;
  /** Distinguishes several accounts of one owner; 0 by default. */
  salt?: bigint;
  framework: Pick<DelegationFrameworkContracts, 'hybridDeleGatorImpl' | 'simpleFactory'>;
}

/** The counterfactual HybridDeleGator of `owner` (the same address whether or not it is deployed yet). */
export function hybridDeleGatorAccount({
  owner,
  salt = 0n,
  framework,
}: HybridDeleGatorAccountParameters): HybridDeleGatorAccount {
  const initialize = encodeFunctionData({
    abi: hybridDeleGatorAbi,
    functionName: 'initialize',
    args: [owner, [], [], []],
  });
  const proxyInitCode = `${ERC1967Proxy}${encodeAbiParameters(
    [{ type: 'address' }, { type: 'bytes' }],
    [framework.hybridDeleGatorImpl, initialize],
  ).slice(2)}` as Hex;
  const saltWord = pad(toHex(salt), { size: 32 });
  return {
    address: getContractAddress({
      opcode: 'CREATE2',
      from: framework.simpleFactory,
      salt: saltWord,
      bytecode: proxyInitCode,
    }),
    owner,
    factory: framework.simpleFactory,
    factoryData: encodeFunctionData({
      abi: simpleFactoryAbi,
      functionName: 'deploy',
      args: [proxyInitCode, saltWord],
    }),
  };
}

/** Account call data that makes one call (ERC-7579 `execute(bytes32,bytes)`, SingleDefault mode). */
export function encodeDeleGatorExecute(execution: { target: Address; value: bigint; data: Hex }): Hex {
  return encodeFunctionData({
    abi: hybridDeleGatorAbi,
    functionName: 'execute',
    args: [SINGLE_DEFAULT_MODE, encodeSingleExecution(execution)],
  });
}

const PACKED_USER_OPERATION_TYPES = {
  PackedUserOperation: [
    { name: 'sender', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'initCode', type: 'bytes' },
    { name: 'callData', type: 'bytes' },
    { name: 'accountGasLimits', type: 'bytes32' },
    { name: 'preVerificationGas', type: 'uint256' },
    { name: 'gasFees', type: 'bytes32' },
    { name: 'paymasterAndData', type: 'bytes' },
    { name: 'entryPoint', type: 'address' },
  ],
} as const;

/**
 * The owner's signature of a v0.7 user operation sent by its HybridDeleGator: EIP-712 over the packed
 * operation and the EntryPoint, in the account's own domain (DeleGatorCore.validateUserOp).
 */
export async function signDeleGatorUserOperation({
  owner,
  userOperation,
  chainId,
  entryPoint,
}: {
  owner: LocalAccount;
  userOperation: UserOperation<'0.7'>;
  chainId: number;
  entryPoint: Address;
}): Promise<Hex> {
  const packed = toPackedUserOperation({ ...userOperation, signature: '0x' });
  return owner.signTypedData({
    domain: { name: 'HybridDeleGator', version: '1', chainId, verifyingContract: userOperation.sender },
    types: PACKED_USER_OPERATION_TYPES,
    primaryType: 'PackedUserOperation',
    message: {
      sender: packed.sender,
      nonce: packed.nonce,
      initCode: packed.initCode,
      callData: packed.callData,
      accountGasLimits: packed.accountGasLimits,
      preVerificationGas: packed.preVerificationGas,
      gasFees: packed.gasFees,
      paymasterAndData: packed.paymasterAndData,
      entryPoint,
    },
  });
}
