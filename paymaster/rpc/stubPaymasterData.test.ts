import { hashMessage, keccak256, recoverAddress, toBytes, type Address } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { PAYMASTER_DATA_LENGTH, decodePaymasterData } from '../../chain/paymasterData';
import { MINIMUM_PAYMASTER_GAS } from '../../chain/paymasterData';
import {
  STUB_EXCHANGE_RATE,
  STUB_SIGNATURE,
  STUB_SIGNATURE_HASH,
  STUB_SIGNATURE_SIGNER,
  buildStubPaymasterResult,
} from './stubPaymasterData';

const PAYMASTER: Address = '0x9999999999999999999999999999999999999999';
const TOKEN: Address = '0x3333333333333333333333333333333333333333';

describe('stub paymaster data', () => {
  it('the placeholder signature is a valid signature by private key 1 over a documented hash', async () => {
    expect(STUB_SIGNATURE_HASH).toBe(
      keccak256(toBytes('stablepay paymaster stub data: not an authorization')),
    );
    expect(STUB_SIGNATURE_SIGNER).toBe(privateKeyToAddress(`0x${'00'.repeat(31)}01`));
    expect(await recoverAddress({ hash: STUB_SIGNATURE_HASH, signature: STUB_SIGNATURE })).toBe(
      STUB_SIGNATURE_SIGNER,
    );
  });

  it('over any other digest (what the contract checks) it recovers to some address, never failing to parse', async () => {
    const recovered = await recoverAddress({
      hash: hashMessage({ raw: STUB_SIGNATURE_HASH }),
      signature: STUB_SIGNATURE,
    });
    expect(recovered).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });

  it('sponsored stub: the contract layout (mode 0, window, signature) and the signer floors', () => {
    const result = buildStubPaymasterResult({
      paymaster: PAYMASTER,
      validUntil: 1_900_000_000,
      validAfter: 0,
      requestedGas: {},
    });
    expect(result.paymaster).toBe(PAYMASTER);
    expect((result.paymasterData.length - 2) / 2).toBe(PAYMASTER_DATA_LENGTH.sponsored);
    expect(decodePaymasterData(result.paymasterData)).toEqual({
      mode: 'sponsored',
      validUntil: 1_900_000_000,
      validAfter: 0,
      signature: STUB_SIGNATURE,
    });
    expect(BigInt(result.paymasterVerificationGasLimit)).toBe(MINIMUM_PAYMASTER_GAS.sponsored.verification);
    expect(BigInt(result.paymasterPostOpGasLimit)).toBe(MINIMUM_PAYMASTER_GAS.sponsored.postOp);
  });

  it('ERC-20 stub: token and the placeholder exchange rate; requested gas limits above the floors are kept', () => {
    const result = buildStubPaymasterResult({
      paymaster: PAYMASTER,
      token: TOKEN,
      validUntil: 1_900_000_000,
      validAfter: 0,
      requestedGas: { paymasterVerificationGasLimit: 1_000_000n, paymasterPostOpGasLimit: 1n },
    });
    expect(decodePaymasterData(result.paymasterData)).toEqual({
      mode: 'erc20',
      validUntil: 1_900_000_000,
      validAfter: 0,
      token: TOKEN,
      exchangeRate: STUB_EXCHANGE_RATE,
      signature: STUB_SIGNATURE,
    });
    expect(BigInt(result.paymasterVerificationGasLimit)).toBe(1_000_000n);
    expect(BigInt(result.paymasterPostOpGasLimit)).toBe(MINIMUM_PAYMASTER_GAS.erc20.postOp);
  });
});
