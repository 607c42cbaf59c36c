import { encodeFunctionData, parseAbi, recoverMessageAddress, type Address, type Hex } from 'viem';
import { getUserOperationHash } from 'viem/account-abstraction';
import {
  ENTRY_POINT_V07_ADDRESS,
  ENTRY_POINT_V08_ADDRESS,
  type EntryPointVersion,
} from '../../chain/entryPoints';
import { decodePaymasterData, sponsorshipHash, type SponsorshipTerms } from '../../chain/paymasterData';
import { paymasterFromContracts } from '../../chain/paymasters';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { allowContract, createPaymasterClient, paymasterRpc, usageRows } from './paymasterApi';

/**
 * Signed paymaster data through the run's real signing service (signer/): the answer carries a
 * signature by the paymaster's verifying signer over the hash the contract checks, and each signed
 * operation is one `submitted` usage row whose userOpHash is the EntryPoint's hash of the operation.
 */

const A: Address = '0x1000000000000000000000000000000000000001';
const B: Address = '0x1000000000000000000000000000000000000002';
const SENDER: Address = '0x4000000000000000000000000000000000000004';
const CHAIN_ID = 84532;
const ENTRY_POINTS: Record<EntryPointVersion, Address> = {
  '0.7': ENTRY_POINT_V07_ADDRESS,
  '0.8': ENTRY_POINT_V08_ADDRESS,
};

const batch: Hex = encodeFunctionData({
  abi: parseAbi(['function executeBatch(address[] targets, uint256[] values, bytes[] datas)']),
  functionName: 'executeBatch',
  args: [
    [A, B, A],
    [0n, 0n, 0n],
    ['0x', '0x01', '0x'],
  ],
});
const userOp = {
  sender: SENDER,
  nonce: '0x5',
  callData: batch,
  callGasLimit: '0x30000',
  verificationGasLimit: '0x30000',
  preVerificationGas: '0x10000',
  maxFeePerGas: '0x77359400',
  maxPriorityFeePerGas: '0x3b9aca00',
  signature: '0x',
};

describe('signed paymaster data (real signing service)', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  let clientId: string;
  const contracts = () => testStack().chains.find((chain) => chain.chainId === CHAIN_ID)!.contracts;
  const whitelistedToken = () => Object.keys(testStack().signer.erc20Tokens[String(CHAIN_ID)]!)[0] as Address;

  beforeAll(async () => {
    app = await startTestApp();
    merchant = await signInNewMerchant(app);
    clientId = (await createPaymasterClient(app, merchant, { allowedChainIds: [CHAIN_ID], gasMode: 'both' }))
      .clientId;
    await allowContract(app, merchant, CHAIN_ID, A);
    await allowContract(app, merchant, CHAIN_ID, B);
  });
  afterAll(() => app.close());

  /**
   * Each case signs its own operation (its own nonce): an identical operation signed again in the same
   * second is the same on-chain operation and answers the stored result without a second row.
   */
  const rpc = (
    method: string,
    version: EntryPointVersion,
    nonce: bigint,
    context?: Record<string, unknown>,
  ) =>
    paymasterRpc(app, clientId, {
      jsonrpc: '2.0',
      id: 1,
      method,
      params: [
        { ...userOp, nonce: `0x${nonce.toString(16)}` },
        ENTRY_POINTS[version],
        CHAIN_ID,
        ...(context ? [context] : []),
      ],
    });

  /** The verifying signer's address recovered from the data, over the hash the paymaster contract computes. */
  async function signerOf(
    result: {
      paymaster: Address;
      paymasterData: Hex;
      paymasterVerificationGasLimit: Hex;
      paymasterPostOpGasLimit: Hex;
    },
    nonce: bigint,
  ) {
    const decoded = decodePaymasterData(result.paymasterData)!;
    const { signature, ...terms } = decoded;
    const hash = sponsorshipHash({
      chainId: CHAIN_ID,
      paymaster: result.paymaster,
      terms: terms as SponsorshipTerms,
      userOperation: {
        sender: SENDER,
        nonce,
        callData: batch,
        callGasLimit: 0x30000n,
        verificationGasLimit: 0x30000n,
        preVerificationGas: 0x10000n,
        maxFeePerGas: 0x77359400n,
        maxPriorityFeePerGas: 0x3b9aca00n,
        paymasterVerificationGasLimit: BigInt(result.paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: BigInt(result.paymasterPostOpGasLimit),
      },
    });
    return recoverMessageAddress({ message: { raw: hash }, signature });
  }

  function expectedUserOpHash(
    version: EntryPointVersion,
    nonce: bigint,
    result: {
      paymaster: Address;
      paymasterData: Hex;
      paymasterVerificationGasLimit: Hex;
      paymasterPostOpGasLimit: Hex;
    },
  ) {
    return getUserOperationHash({
      chainId: CHAIN_ID,
      entryPointAddress: ENTRY_POINTS[version],
      entryPointVersion: version,
      userOperation: {
        sender: SENDER,
        nonce,
        callData: batch,
        callGasLimit: 0x30000n,
        verificationGasLimit: 0x30000n,
        preVerificationGas: 0x10000n,
        maxFeePerGas: 0x77359400n,
        maxPriorityFeePerGas: 0x3b9aca00n,
        paymaster: result.paymaster,
        paymasterVerificationGasLimit: BigInt(result.paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: BigInt(result.paymasterPostOpGasLimit),
        paymasterData: result.paymasterData,
        signature: '0x',
      },
    });
  }

  it.each([
    ['pm_getPaymasterData', '0.7', 5n],
    ['pm_getPaymasterData', '0.8', 6n],
    ['pm_sponsorUserOperation', '0.7', 7n],
    ['pm_sponsorUserOperation', '0.8', 8n],
  ] as const)(
    '%s on EntryPoint v%s: sponsored data signed by the verifying signer, one submitted usage row',
    async (method, version, nonce) => {
      const response = await rpc(method, version, nonce);
      expect(response.status).toBe(200);
      const { result } = response.body;
      expect(result).toEqual({
        paymaster: paymasterFromContracts(contracts(), version),
        paymasterData: expect.stringMatching(/^0x00/),
        paymasterVerificationGasLimit: expect.stringMatching(/^0x[0-9a-f]+$/),
        paymasterPostOpGasLimit: expect.stringMatching(/^0x[0-9a-f]+$/),
      });
      expect(await signerOf(result, nonce)).toBe(testStack().signer.address);

      const [row] = await usageRows(app, merchant);
      expect(row).toEqual({
        id: expect.any(String),
        clientId,
        method,
        chainId: CHAIN_ID,
        mode: 'sponsored',
        status: 'submitted',
        reason: null,
        sender: SENDER,
        entryPoint: ENTRY_POINTS[version],
        userOpHash: expectedUserOpHash(version, nonce, result),
        targets: [A, B, A],
        actualGasCost: null,
        actualGasUsed: null,
        // Priced when signed at the local feed's 3,000 USD per ETH (the charge comes with the receipt).
        usdSnapshot: {
          ethUsdPrice: '3000',
          estimatedGasCostWei: expect.stringMatching(/^[1-9][0-9]*$/),
          estimatedCostUsd: expect.stringMatching(/^[0-9]+(\.[0-9]{1,6})?$/),
        },
        // The client's default policy sponsored it (issue 43).
        policyId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        createdAt: expect.any(String),
      });
    },
  );

  it('pm_getPaymasterData with a whitelisted token: ERC-20 mode data at the priced rate, recorded as user_paid', async () => {
    const token = whitelistedToken();
    const response = await rpc('pm_getPaymasterData', '0.7', 9n, { token });
    const { result } = response.body;
    const decoded = decodePaymasterData(result.paymasterData);
    expect(decoded).toMatchObject({
      mode: 'erc20',
      token,
      // The shared feed's 3,000 USD per ether at the stablecoin's 1 USD peg, plus the default 10 % margin:
      // the signer's configured rate (3,000 per ether) × 1.1 (finding 8; userPaidRates.test.ts moves the feed).
      exchangeRate: (BigInt(testStack().signer.erc20Tokens[String(CHAIN_ID)]![token]!) * 11n) / 10n,
    });
    expect(await signerOf(result, 9n)).toBe(testStack().signer.address);
    expect((await usageRows(app, merchant))[0]).toMatchObject({
      status: 'submitted',
      mode: 'user_paid',
      userOpHash: expectedUserOpHash('0.7', 9n, result),
    });
  });

  it('a token the signer does not whitelist: its -32602 refusal reaches the caller unchanged', async () => {
    const response = await rpc('pm_getPaymasterData', '0.8', 10n, {
      token: '0x6000000000000000000000000000000000000006',
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: 'token not whitelisted' },
    });
    expect((await usageRows(app, merchant))[0]).toMatchObject({
      status: 'denied_upstream',
      reason: 'signer_rejected',
    });
  });
});
