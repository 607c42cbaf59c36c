import { randomBytes } from 'node:crypto';
import { type Address, type Hex, getAddress } from 'viem';
import { getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from '../../chain/entryPoints';
import { EIP7702_INITCODE_MARKER } from '../../chain/paymasterData';
import type { SponsorshipUserOperation } from './sponsorshipParams';
import type { PaymasterResult } from './signerClient';
import { sponsoredUserOpHash } from './userOpHash';

const hex = (bytes: number): Hex => `0x${randomBytes(bytes).toString('hex')}`;
const address = (): Address => getAddress(hex(20));
const uint = (bytes: number): bigint => (bytes === 0 ? 0n : BigInt(hex(bytes)));

/** The operation as viem types it, with our paymaster fields: what viem's hash is computed over. */
function toViemUserOperation(
  chainId: number,
  userOp: SponsorshipUserOperation,
  paymaster: Pick<
    PaymasterResult,
    'paymaster' | 'paymasterData' | 'paymasterVerificationGasLimit' | 'paymasterPostOpGasLimit'
  >,
): UserOperation<'0.7'> {
  return {
    sender: userOp.sender,
    nonce: userOp.nonce,
    factory: userOp.factory as Address | undefined,
    factoryData: userOp.factoryData,
    callData: userOp.callData,
    callGasLimit: userOp.gas.callGasLimit ?? 0n,
    verificationGasLimit: userOp.gas.verificationGasLimit ?? 0n,
    preVerificationGas: userOp.gas.preVerificationGas ?? 0n,
    maxFeePerGas: userOp.gas.maxFeePerGas ?? 0n,
    maxPriorityFeePerGas: userOp.gas.maxPriorityFeePerGas ?? 0n,
    paymaster: paymaster.paymaster,
    paymasterVerificationGasLimit: BigInt(paymaster.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: BigInt(paymaster.paymasterPostOpGasLimit),
    paymasterData: paymaster.paymasterData,
    signature: '0x',
    // Only the delegate address enters the hash of an EIP-7702 operation.
    ...(userOp.eip7702Delegate && {
      authorization: { address: userOp.eip7702Delegate, chainId, nonce: 0, r: '0x0', s: '0x0', yParity: 0 },
    }),
  };
}

/** viem's own hash of the same operation: what sponsoredUserOpHash computed before issue 20. */
function viemHash(
  chainId: number,
  entryPoint: Address,
  entryPointVersion: '0.7' | '0.8',
  userOp: SponsorshipUserOperation,
  paymaster: Parameters<typeof toViemUserOperation>[2],
): Hex {
  const userOperation = toViemUserOperation(chainId, userOp, paymaster);
  return getUserOperationHash({ chainId, entryPointAddress: entryPoint, entryPointVersion, userOperation });
}

describe('sponsoredUserOpHash', () => {
  it("equals viem's getUserOperationHash for every kind of operation, on v0.8 and v0.7", () => {
    for (let i = 0; i < 300; i++) {
      const kind = i % 3; // plain, deployed by a factory, EIP-7702
      const version = i % 5 === 0 ? '0.7' : '0.8';
      if (kind === 2 && version === '0.7') continue;
      const userOp: SponsorshipUserOperation = {
        sender: address(),
        nonce: uint(1 + (i % 32)),
        callData: hex(i % 7 === 0 ? 0 : 4 + ((i * 37) % 300)),
        ...(kind === 1 && { factory: address(), factoryData: hex((i * 13) % 100) }),
        ...(kind === 2 && {
          factory: EIP7702_INITCODE_MARKER,
          factoryData: hex(i % 2 ? 0 : 24),
          eip7702Delegate: address(),
        }),
        gas: {
          callGasLimit: uint(1 + (i % 16)),
          verificationGasLimit: uint(3),
          preVerificationGas: uint(1 + (i % 8)),
          maxFeePerGas: uint(1 + (i % 16)),
          ...(i % 4 !== 0 && { maxPriorityFeePerGas: uint(8) }),
        },
      };
      const paymaster = {
        paymaster: address(),
        paymasterData: hex(i % 2 ? 78 : 130),
        paymasterVerificationGasLimit: `0x${uint(4).toString(16)}` as Hex,
        paymasterPostOpGasLimit: `0x${uint(i % 3 ? 3 : 0).toString(16)}` as Hex,
      };
      const chainId = [1, 8453, 84532, 31337][i % 4]!;
      const entryPoint = version === '0.8' ? ENTRY_POINT_V08_ADDRESS : ENTRY_POINT_V07_ADDRESS;
      expect(
        sponsoredUserOpHash({ chainId, entryPoint, entryPointVersion: version, userOp, paymaster }),
      ).toBe(viemHash(chainId, entryPoint, version, userOp, paymaster));
    }
  });

  it('refuses a gas field wider than its 16 bytes instead of spilling into the next word, as viem does', () => {
    const userOp: SponsorshipUserOperation = {
      sender: address(),
      nonce: 1n,
      callData: '0x',
      gas: { callGasLimit: 2n ** 128n, verificationGasLimit: 1n },
    };
    const paymaster = {
      paymaster: address(),
      paymasterData: hex(78),
      paymasterVerificationGasLimit: '0x1' as Hex,
      paymasterPostOpGasLimit: '0x0' as Hex,
    };
    for (const entryPointVersion of ['0.7', '0.8'] as const) {
      const entryPoint = entryPointVersion === '0.8' ? ENTRY_POINT_V08_ADDRESS : ENTRY_POINT_V07_ADDRESS;
      expect(() => viemHash(1, entryPoint, entryPointVersion, userOp, paymaster)).toThrow();
      expect(() =>
        sponsoredUserOpHash({ chainId: 1, entryPoint, entryPointVersion, userOp, paymaster }),
      ).toThrow(RangeError);
    }
  });
});
