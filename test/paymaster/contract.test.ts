import {
  type Abi,
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type PublicClient,
  type Transport,
  concat,
  decodeAbiParameters,
  encodeAbiParameters,
  encodeFunctionData,
  numberToHex,
  parseEther,
  parseEventLogs,
  zeroAddress,
} from 'viem';
import {
  type UserOperation,
  entryPoint07Abi,
  entryPoint08Abi,
  getUserOperationHash,
  toPackedUserOperation,
} from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { readContract, simulateContract, waitForTransactionReceipt, writeContract } from 'viem/actions';
import {
  LOCAL_PAYMASTER_SIGNER,
  type LocalChainDeployment,
  deployLocalChain,
} from '../../dev/chains/deployLocalChain';
import { type EntryPointVersion, entryPointAbi } from '../../chain/entryPoints';
import {
  POSTOP_OVERHEAD_GAS,
  type SponsorshipTerms,
  encodePaymasterData,
  sponsorshipHash,
  tokenAmountForGasCost,
} from '../../chain/paymasterData';
import { paymasterAddress } from '../../chain/paymasters';
import { LOCAL_PAYMASTER_FUNDING } from '../../dev/chains/localPaymasters';
import { ManagedPaymasterV07, ManagedPaymasterV08, TestStablecoin } from '../../contracts/artifacts';
import {
  ANVIL_DEV_ACCOUNTS,
  type StartAnvilChainsReturnType,
  startAnvilChains,
} from '../../dev/services/anvil';
import {
  ENTRY_POINTS,
  type SimpleAccount,
  deploySimpleAccountFactory,
  fundedWallet,
  newSimpleAccount,
  publicClientFor,
  rpc,
} from './smartAccounts';

/**
 * The managed paymaster contracts on a chain of their own (these tests impersonate the EntryPoint),
 * driven directly and through EntryPoint.handleOps, without a bundler.
 */

const CHAIN_ID = 31_338;
const PAYMASTER_ABIS: Record<EntryPointVersion, Abi> = {
  '0.7': ManagedPaymasterV07.abi,
  '0.8': ManagedPaymasterV08.abi,
};
const ENTRY_POINT_ABIS = { '0.7': entryPoint07Abi, '0.8': entryPoint08Abi } as const;
const signer = privateKeyToAccount(LOCAL_PAYMASTER_SIGNER.privateKey);
const stranger = privateKeyToAccount(generatePrivateKey());
/** 6-decimal stablecoin at 3,000 per ether. */
const RATE = 3_000_000_000n;

let anvil: StartAnvilChainsReturnType;
let rpcUrl: string;
let publicClient: PublicClient;
let wallet: Client<Transport, Chain, Account>;
let contracts: LocalChainDeployment;
const factories = {} as Record<EntryPointVersion, Address>;

beforeAll(async () => {
  anvil = await startAnvilChains({ chains: [{ chainId: CHAIN_ID }], silent: true });
  rpcUrl = anvil.chains[0]!.rpcUrl;
  publicClient = publicClientFor(rpcUrl);
  contracts = await deployLocalChain({
    rpcUrl,
    chainId: CHAIN_ID,
    deployerPrivateKey: ANVIL_DEV_ACCOUNTS[0].privateKey,
  });
  wallet = await fundedWallet(rpcUrl, CHAIN_ID);
  factories['0.7'] = await deploySimpleAccountFactory(wallet, '0.7');
  factories['0.8'] = await deploySimpleAccountFactory(wallet, '0.8');
});

afterAll(async () => {
  await anvil?.stop();
});

const paymasterOf = (version: EntryPointVersion): Address =>
  version === '0.7' ? contracts.paymasterV07 : contracts.paymasterV08;

async function latestTimestamp(): Promise<number> {
  return Number((await publicClient.getBlock()).timestamp);
}

/** A first operation of a fresh SimpleAccount (creates it) with fixed, generous gas limits. */
async function draftOperation(
  version: EntryPointVersion,
  callData?: Hex,
): Promise<{ account: SimpleAccount; op: UserOperation<'0.7'> }> {
  const account = await newSimpleAccount(publicClient, { version, factory: factories[version] });
  const { baseFeePerGas } = await publicClient.getBlock();
  return {
    account,
    op: {
      sender: account.address,
      nonce: 0n,
      factory: account.factory,
      factoryData: account.factoryData,
      callData: callData ?? account.execute(account.address, 0n, '0x'),
      callGasLimit: 100_000n,
      verificationGasLimit: 400_000n,
      preVerificationGas: 60_000n,
      maxFeePerGas: (baseFeePerGas ?? 0n) * 2n + 1_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      paymasterVerificationGasLimit: 100_000n,
      paymasterPostOpGasLimit: 100_000n,
      signature: '0x',
    },
  };
}

/** Signs the terms as the signing service does (EIP-191 over the sponsorship hash) and attaches the data. */
async function withPaymasterData(
  version: EntryPointVersion,
  op: UserOperation<'0.7'>,
  terms: SponsorshipTerms,
  by = signer,
): Promise<UserOperation<'0.7'>> {
  const paymaster = paymasterOf(version);
  const hash = sponsorshipHash({ userOperation: op, chainId: CHAIN_ID, paymaster, terms });
  const signature = await by.signMessage({ message: { raw: hash } });
  return { ...op, paymaster, paymasterData: encodePaymasterData(terms, signature) };
}

/** ERC-20 terms in the local USDC at 3,000 per ether, valid until 2033. */
const farErc20Terms = (): SponsorshipTerms => ({
  mode: 'erc20',
  validUntil: 2_000_000_000,
  validAfter: 0,
  token: contracts.usdc,
  exchangeRate: RATE,
});

function packed(op: UserOperation<'0.7'>) {
  return toPackedUserOperation(op);
}

/** validatePaymasterUserOp as the EntryPoint calls it; `maxCost` is the required prefund (0: no ERC-20 pre-charge). */
async function validateAsEntryPoint(version: EntryPointVersion, op: UserOperation<'0.7'>, maxCost = 0n) {
  const { result } = await simulateContract(publicClient, {
    account: ENTRY_POINTS[version],
    address: paymasterOf(version),
    // The token's errors too, so a failed pre-charge decodes by name.
    abi: [...ManagedPaymasterV08.abi, ...TestStablecoin.abi],
    functionName: 'validatePaymasterUserOp',
    args: [packed(op), '0x'.padEnd(66, '1') as Hex, maxCost],
  });
  const [context, validationData] = result;
  return {
    context,
    signatureFailed: (validationData & 1n) === 1n,
    aggregator: validationData & ((1n << 160n) - 1n),
    validUntil: Number((validationData >> 160n) & ((1n << 48n) - 1n)),
    validAfter: Number(validationData >> 208n),
  };
}

async function handleOps(version: EntryPointVersion, op: UserOperation<'0.7'>) {
  const { request } = await simulateContract(wallet, {
    address: ENTRY_POINTS[version],
    abi: ENTRY_POINT_ABIS[version],
    functionName: 'handleOps',
    args: [[packed(op)], wallet.account.address],
  });
  const hash = await writeContract(wallet, request);
  return waitForTransactionReceipt(wallet, { hash });
}

async function signedByAccount(version: EntryPointVersion, account: SimpleAccount, op: UserOperation<'0.7'>) {
  return { ...op, signature: await account.sign(op, CHAIN_ID) };
}

const deposit = (version: EntryPointVersion) =>
  readContract(publicClient, {
    address: ENTRY_POINTS[version],
    abi: entryPointAbi,
    functionName: 'balanceOf',
    args: [paymasterOf(version)],
  });

const tokenBalance = (address: Address) =>
  readContract(publicClient, {
    address: contracts.usdc,
    abi: TestStablecoin.abi,
    functionName: 'balanceOf',
    args: [address],
  });

describe.each(['0.7', '0.8'] as const)('ManagedPaymaster for EntryPoint v%s', (version) => {
  const otherVersion: EntryPointVersion = version === '0.7' ? '0.8' : '0.7';

  it('is deployed at its deterministic address, owned by the deployer, verifying with the signing key, deposited and staked', async () => {
    const paymaster = paymasterOf(version);
    expect(paymaster).toBe(
      paymasterAddress({
        version,
        owner: ANVIL_DEV_ACCOUNTS[0].address,
        verifyingSigner: LOCAL_PAYMASTER_SIGNER.address,
      }),
    );
    expect(paymaster).not.toBe(paymasterOf(otherVersion));
    const read = (functionName: 'owner' | 'verifyingSigner' | 'entryPoint') =>
      readContract(publicClient, { address: paymaster, abi: ManagedPaymasterV08.abi, functionName });
    expect(await read('owner')).toBe(ANVIL_DEV_ACCOUNTS[0].address);
    expect(await read('verifyingSigner')).toBe(LOCAL_PAYMASTER_SIGNER.address);
    expect(await read('entryPoint')).toBe(ENTRY_POINTS[version]);
    const info = await readContract(publicClient, {
      address: ENTRY_POINTS[version],
      abi: entryPointAbi,
      functionName: 'getDepositInfo',
      args: [paymaster],
    });
    expect(info.deposit).toBeGreaterThanOrEqual(LOCAL_PAYMASTER_FUNDING.minimumDeposit);
    expect(info).toMatchObject({
      staked: true,
      stake: LOCAL_PAYMASTER_FUNDING.stake,
      unstakeDelaySec: LOCAL_PAYMASTER_FUNDING.unstakeDelaySec,
    });
  });

  it.each(['sponsored', 'erc20'] as const)(
    'getHash on-chain equals the off-chain sponsorship hash (%s mode)',
    async (mode) => {
      const { op } = await draftOperation(version);
      const terms: SponsorshipTerms =
        mode === 'sponsored'
          ? { mode, validUntil: 2_000_000_000, validAfter: 1_700_000_000 }
          : {
              mode,
              validUntil: 2_000_000_000,
              validAfter: 1_700_000_000,
              token: contracts.usdc,
              exchangeRate: RATE,
            };
      const offChain = sponsorshipHash({
        userOperation: op,
        chainId: CHAIN_ID,
        paymaster: paymasterOf(version),
        terms,
      });
      const onChain = await readContract(publicClient, {
        address: paymasterOf(version),
        abi: ManagedPaymasterV08.abi,
        functionName: 'getHash',
        args: [
          packed({ ...op, paymaster: paymasterOf(version), paymasterData: '0x' }),
          terms.validUntil,
          terms.validAfter,
          mode === 'sponsored' ? 0 : 1,
          terms.mode === 'erc20' ? terms.token : zeroAddress,
          terms.mode === 'erc20' ? terms.exchangeRate : 0n,
        ],
      });
      expect(onChain).toBe(offChain);
      // Every signed field matters: another gas limit, another paymaster or another chain is another hash.
      expect(
        sponsorshipHash({
          userOperation: { ...op, callGasLimit: op.callGasLimit + 1n },
          chainId: CHAIN_ID,
          paymaster: paymasterOf(version),
          terms,
        }),
      ).not.toBe(offChain);
      expect(
        sponsorshipHash({
          userOperation: { ...op, paymasterPostOpGasLimit: 1n },
          chainId: CHAIN_ID,
          paymaster: paymasterOf(version),
          terms,
        }),
      ).not.toBe(offChain);
      expect(
        sponsorshipHash({
          userOperation: op,
          chainId: CHAIN_ID,
          paymaster: paymasterOf(otherVersion),
          terms,
        }),
      ).not.toBe(offChain);
      expect(
        sponsorshipHash({ userOperation: op, chainId: CHAIN_ID + 1, paymaster: paymasterOf(version), terms }),
      ).not.toBe(offChain);
    },
  );

  it('a signature by the verifying signer validates with the signed window and no failure flag', async () => {
    const { op } = await draftOperation(version);
    const validation = await validateAsEntryPoint(
      version,
      await withPaymasterData(version, op, {
        mode: 'sponsored',
        validUntil: 2_000_000_000,
        validAfter: 1_700_000_000,
      }),
    );
    expect(validation).toEqual({
      context: '0x',
      signatureFailed: false,
      aggregator: 0n,
      validUntil: 2_000_000_000,
      validAfter: 1_700_000_000,
    });
  });

  it('a signature by another key gives SIG_VALIDATION_FAILED (validation data), not a revert', async () => {
    const { op } = await draftOperation(version);
    const validation = await validateAsEntryPoint(
      version,
      await withPaymasterData(
        version,
        op,
        { mode: 'sponsored', validUntil: 2_000_000_000, validAfter: 0 },
        stranger,
      ),
    );
    expect(validation).toMatchObject({ signatureFailed: true, validUntil: 2_000_000_000, validAfter: 0 });
  });

  it('an unrecoverable 65-byte signature (the stub placeholder shape) gives SIG_VALIDATION_FAILED, not a revert', async () => {
    const { op } = await draftOperation(version);
    const terms: SponsorshipTerms = {
      mode: 'erc20',
      validUntil: 2_000_000_000,
      validAfter: 0,
      token: contracts.usdc,
      exchangeRate: RATE,
    };
    const zeroSignature = `0x${'00'.repeat(65)}` as Hex;
    const validation = await validateAsEntryPoint(version, {
      ...op,
      paymaster: paymasterOf(version),
      paymasterData: encodePaymasterData(terms, zeroSignature),
    });
    expect(validation.signatureFailed).toBe(true);
  });

  it('a signature for one paymaster does not validate on the other release', async () => {
    const { op } = await draftOperation(version);
    const signedForOther = await withPaymasterData(otherVersion, op, {
      mode: 'sponsored',
      validUntil: 2_000_000_000,
      validAfter: 0,
    });
    const validation = await validateAsEntryPoint(version, {
      ...signedForOther,
      paymaster: paymasterOf(version),
    });
    expect(validation.signatureFailed).toBe(true);
  });

  it('ERC-20 mode pre-charges the maximum cost at validation and returns the postOp context (userOpHash, sender, token, rate, pre-charge)', async () => {
    const { op } = await draftOperation(version);
    await mint(op.sender, 10_000_000n);
    await sendAs(op.sender, contracts.usdc, TestStablecoin.abi, 'approve', [
      paymasterOf(version),
      10_000_000n,
    ]);
    // 0.001 ETH of required prefund at 3,000 tokens per ether: 3,000,000 base units.
    const validation = await validateAsEntryPoint(
      version,
      await withPaymasterData(version, op, farErc20Terms()),
      10n ** 15n,
    );
    expect(validation.signatureFailed).toBe(false);
    const [, sender, token, rate, preCharge] = decodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'address' },
        { type: 'address' },
        { type: 'uint256' },
        { type: 'uint256' },
      ],
      validation.context,
    );
    expect({ sender, token, rate, preCharge }).toEqual({
      sender: op.sender,
      token: contracts.usdc,
      rate: RATE,
      preCharge: 3_000_000n,
    });
  });

  it('ERC-20 validation reverts when the sender has not approved the paymaster (nothing can be included)', async () => {
    const { op } = await draftOperation(version);
    await mint(op.sender, 10_000_000n);
    await expect(
      validateAsEntryPoint(version, await withPaymasterData(version, op, farErc20Terms()), 10n ** 15n),
    ).rejects.toThrow(/ERC20InsufficientAllowance/);
  });

  it.each([
    ['an unknown mode byte', concat(['0x02', `0x${'00'.repeat(77)}`]), /UnsupportedPaymasterMode/],
    [
      'sponsored mode with the ERC-20 length',
      concat(['0x00', `0x${'00'.repeat(129)}`]),
      /InvalidPaymasterDataLength/,
    ],
    [
      'ERC-20 mode with the sponsored length',
      concat(['0x01', `0x${'00'.repeat(77)}`]),
      /InvalidPaymasterDataLength/,
    ],
    ['a truncated signature', concat(['0x00', `0x${'00'.repeat(76)}`]), /InvalidPaymasterDataLength/],
    ['empty paymasterData', '0x' as Hex, /InvalidPaymasterDataLength/],
    ['ERC-20 mode with the zero token', concat(['0x01', `0x${'00'.repeat(129)}`]), /ZeroToken/],
  ])('%s reverts validation', async (_, paymasterData, error) => {
    const { op } = await draftOperation(version);
    await expect(
      validateAsEntryPoint(version, { ...op, paymaster: paymasterOf(version), paymasterData }),
    ).rejects.toThrow(error);
  });

  it('only the EntryPoint may call validatePaymasterUserOp and postOp', async () => {
    const { op } = await draftOperation(version);
    const signedOp = await withPaymasterData(version, op, {
      mode: 'sponsored',
      validUntil: 2_000_000_000,
      validAfter: 0,
    });
    await expect(
      simulateContract(publicClient, {
        account: wallet.account.address,
        address: paymasterOf(version),
        abi: ManagedPaymasterV08.abi,
        functionName: 'validatePaymasterUserOp',
        args: [packed(signedOp), `0x${'11'.repeat(32)}`, 0n],
      }),
    ).rejects.toThrow(/Sender not EntryPoint/);
    await expect(
      simulateContract(publicClient, {
        account: wallet.account.address,
        address: paymasterOf(version),
        abi: ManagedPaymasterV08.abi,
        functionName: 'postOp',
        args: [0, '0x', 0n, 0n],
      }),
    ).rejects.toThrow(/Sender not EntryPoint/);
  });

  it('only the owner may rotate the signer or withdraw collected tokens', async () => {
    await expect(
      simulateContract(wallet, {
        address: paymasterOf(version),
        abi: PAYMASTER_ABIS[version],
        functionName: 'setVerifyingSigner',
        args: [stranger.address],
      }),
    ).rejects.toThrow(/OwnableUnauthorizedAccount/);
    await expect(
      simulateContract(wallet, {
        address: paymasterOf(version),
        abi: PAYMASTER_ABIS[version],
        functionName: 'withdrawToken',
        args: [contracts.usdc, wallet.account.address, 1n],
      }),
    ).rejects.toThrow(/OwnableUnauthorizedAccount/);
  });

  describe('through EntryPoint.handleOps', () => {
    it('a sponsored operation is paid from the paymaster deposit, by exactly its actualGasCost', async () => {
      const { account, op } = await draftOperation(version);
      const now = await latestTimestamp();
      const ready = await signedByAccount(
        version,
        account,
        await withPaymasterData(version, op, {
          mode: 'sponsored',
          validUntil: now + 600,
          validAfter: now - 60,
        }),
      );
      const before = await deposit(version);
      const receipt = await handleOps(version, ready);
      const [event] = parseEventLogs({
        abi: entryPointAbi,
        logs: receipt.logs,
        eventName: 'UserOperationEvent',
      });
      expect(event?.args).toMatchObject({
        sender: account.address,
        paymaster: paymasterOf(version),
        success: true,
      });
      expect(await deposit(version)).toBe(before - event!.args.actualGasCost);
    });

    it('an expired validUntil is refused by the EntryPoint (AA32)', async () => {
      const { account, op } = await draftOperation(version);
      const now = await latestTimestamp();
      const expired = await signedByAccount(
        version,
        account,
        await withPaymasterData(version, op, { mode: 'sponsored', validUntil: now - 1, validAfter: 0 }),
      );
      await expect(handleOps(version, expired)).rejects.toThrow(/AA32 paymaster expired or not due/);
    });

    it('a validAfter in the future is refused by the EntryPoint (AA32)', async () => {
      const { account, op } = await draftOperation(version);
      const now = await latestTimestamp();
      const early = await signedByAccount(
        version,
        account,
        await withPaymasterData(version, op, {
          mode: 'sponsored',
          validUntil: now + 3600,
          validAfter: now + 1800,
        }),
      );
      await expect(handleOps(version, early)).rejects.toThrow(/AA32 paymaster expired or not due/);
    });

    it('a bad paymaster signature is refused by the EntryPoint as a signature error (AA34), not a revert of the paymaster', async () => {
      const { account, op } = await draftOperation(version);
      const now = await latestTimestamp();
      const forged = await signedByAccount(
        version,
        account,
        await withPaymasterData(
          version,
          op,
          { mode: 'sponsored', validUntil: now + 600, validAfter: 0 },
          stranger,
        ),
      );
      await expect(handleOps(version, forged)).rejects.toThrow(/AA34 signature error/);
    });

    it('issue 13 finding 1: the ERC-20 (user_paid) mode drains the deposit — a sender that never approved the token, with inflated fees, cannot spend the deposit', async () => {
      const { account, op } = await draftOperation(version);
      // Tokens, but no allowance for the paymaster; and a tip a hundred times the usual.
      await mint(account.address, 1_000_000_000n);
      const now = await latestTimestamp();
      const ready = await signedByAccount(
        version,
        account,
        await withPaymasterData(
          version,
          { ...op, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 100_000_000_000n },
          { mode: 'erc20', validUntil: now + 600, validAfter: 0, token: contracts.usdc, exchangeRate: RATE },
        ),
      );
      const before = await deposit(version);
      await expect(handleOps(version, ready)).rejects.toThrow(/AA33 reverted/);
      expect(await deposit(version)).toBe(before);
      expect(await tokenBalance(account.address)).toBe(1_000_000_000n);
    });

    it('ERC-20 mode pre-charges the maximum, refunds the rest: the sender pays exactly the contract-computed token amount and the paymaster receives it', async () => {
      // The sender approved the paymaster beforehand (validation takes the tokens, before any call of the
      // operation runs): here its first operation, sponsored, creates it and approves.
      const approve = encodeFunctionData({
        abi: TestStablecoin.abi,
        functionName: 'approve',
        args: [paymasterOf(version), 10n ** 12n],
      });
      const draft = await draftOperation(version);
      const { account } = draft;
      const start = await latestTimestamp();
      await handleOps(
        version,
        await signedByAccount(
          version,
          account,
          await withPaymasterData(
            version,
            { ...draft.op, callData: account.execute(contracts.usdc, 0n, approve) },
            { mode: 'sponsored', validUntil: start + 600, validAfter: 0 },
          ),
        ),
      );
      await mint(account.address, 1_000_000_000n);
      const now = await latestTimestamp();
      const { factory: _factory, factoryData: _factoryData, ...deployed } = draft.op;
      const ready = await signedByAccount(
        version,
        account,
        await withPaymasterData(
          version,
          { ...deployed, nonce: 1n },
          { mode: 'erc20', validUntil: now + 600, validAfter: 0, token: contracts.usdc, exchangeRate: RATE },
        ),
      );
      const senderBefore = await tokenBalance(account.address);
      const paymasterBefore = await tokenBalance(paymasterOf(version));
      const depositBefore = await deposit(version);
      const receipt = await handleOps(version, ready);

      const [charged] = parseEventLogs({
        abi: ManagedPaymasterV08.abi,
        logs: receipt.logs,
        eventName: 'GasChargedInToken',
      });
      const [included] = parseEventLogs({
        abi: entryPointAbi,
        logs: receipt.logs,
        eventName: 'UserOperationEvent',
      });
      expect(included?.args.success).toBe(true);
      const { actualGasCost, actualUserOpFeePerGas, exchangeRate, tokenAmount } = charged!.args;
      expect(exchangeRate).toBe(RATE);
      expect(tokenAmount).toBe(
        tokenAmountForGasCost(actualGasCost + POSTOP_OVERHEAD_GAS * actualUserOpFeePerGas, RATE),
      );
      expect(tokenAmount).toBeGreaterThan(0n);
      expect(charged!.args.userOpHash).toBe(
        getUserOperationHash({
          userOperation: ready,
          entryPointAddress: ENTRY_POINTS[version],
          entryPointVersion: version,
          chainId: CHAIN_ID,
        }),
      );
      expect(await tokenBalance(account.address)).toBe(senderBefore - tokenAmount);
      expect(await tokenBalance(paymasterOf(version))).toBe(paymasterBefore + tokenAmount);
      expect(await deposit(version)).toBe(depositBefore - included!.args.actualGasCost);
    });
  });

  describe('postOp charge arithmetic (the EntryPoint impersonated)', () => {
    const PRE_CHARGE = 5_000_000n;
    /** The context validation left: the pre-charge it took is in the paymaster's hands. */
    async function preCharged(owner: Address) {
      await mint(paymasterOf(version), PRE_CHARGE);
      return encodeAbiParameters(
        [
          { type: 'bytes32' },
          { type: 'address' },
          { type: 'address' },
          { type: 'uint256' },
          { type: 'uint256' },
        ],
        [`0x${'ab'.repeat(32)}`, owner, contracts.usdc, RATE, PRE_CHARGE],
      );
    }

    it.each([
      // (actualGasCost + 45,000 × fee) × rate / 1e18, rounded up only when there is a remainder.
      ['an exact amount', 955_000_000_000_000n, 1_000_000_000n, 3_000_000n],
      ['a remainder, rounded up', 1_000_000_000_000_001n, 1_000_000_000n, 3_135_001n],
      ['a sub-unit cost, rounded up to one base unit', 1n, 0n, 1n],
      ['a cost above the pre-charge, held to the pre-charge', 10n ** 18n * 2n, 1_000_000_000n, PRE_CHARGE],
    ])('%s: kept out of the pre-charge, the rest refunded', async (_, actualGasCost, feePerGas, expected) => {
      const owner = privateKeyToAccount(generatePrivateKey()).address;
      const context = await preCharged(owner);
      const paymasterBefore = await tokenBalance(paymasterOf(version));
      expect(
        [tokenAmountForGasCost(actualGasCost + POSTOP_OVERHEAD_GAS * feePerGas, RATE), PRE_CHARGE].reduce(
          (a, b) => (a < b ? a : b),
        ),
      ).toBe(expected);
      const receipt = await sendAs(
        ENTRY_POINTS[version],
        paymasterOf(version),
        ManagedPaymasterV08.abi,
        'postOp',
        [0, context, actualGasCost, feePerGas],
      );
      const [charged] = parseEventLogs({
        abi: ManagedPaymasterV08.abi,
        logs: receipt.logs,
        eventName: 'GasChargedInToken',
      });
      expect(charged!.args.tokenAmount).toBe(expected);
      expect(await tokenBalance(owner)).toBe(PRE_CHARGE - expected);
      expect(await tokenBalance(paymasterOf(version))).toBe(paymasterBefore - (PRE_CHARGE - expected));
    });
  });
});

describe('issue 13 finding 5: EIP-7702 operations on EntryPoint v0.8 can be made unbillable', () => {
  it("the v0.8 paymaster's hash of an EIP-7702 operation covers the delegate read from the sender's code", async () => {
    const sender = privateKeyToAccount(generatePrivateKey()).address;
    const delegate = privateKeyToAccount(generatePrivateKey()).address;
    await rpc(rpcUrl, 'anvil_setCode', [sender, concat(['0xef0100', delegate])]);
    const { op } = await draftOperation('0.8');
    const eip7702Op: UserOperation<'0.7'> = {
      ...op,
      sender,
      factory: '0x7702000000000000000000000000000000000000',
      factoryData: '0x',
    };
    const terms: SponsorshipTerms = { mode: 'sponsored', validUntil: 2_000_000_000, validAfter: 0 };
    const onChain = await readContract(publicClient, {
      address: paymasterOf('0.8'),
      abi: ManagedPaymasterV08.abi,
      functionName: 'getHash',
      args: [
        packed({ ...eip7702Op, paymaster: paymasterOf('0.8'), paymasterData: '0x' }),
        2_000_000_000,
        0,
        0,
        zeroAddress,
        0n,
      ],
    });
    const offChain = (eip7702Delegate: Address) =>
      sponsorshipHash({
        userOperation: eip7702Op,
        chainId: CHAIN_ID,
        paymaster: paymasterOf('0.8'),
        terms,
        eip7702Delegate,
      });
    expect(onChain).toBe(offChain(delegate));
    expect(onChain).not.toBe(offChain(stranger.address));
  });
});

async function mint(to: Address, amount: bigint): Promise<void> {
  const hash = await writeContract(wallet, {
    address: contracts.usdc,
    abi: TestStablecoin.abi,
    functionName: 'mint',
    args: [to, amount],
  });
  await waitForTransactionReceipt(wallet, { hash });
}

/** Sends a transaction from `from` by impersonating it (an EOA without a key, or the EntryPoint contract). */
async function sendAs(from: Address, to: Address, abi: Abi, functionName: string, args: unknown[]) {
  await rpc(rpcUrl, 'anvil_impersonateAccount', [from]);
  await rpc(rpcUrl, 'anvil_setBalance', [
    from,
    numberToHex((await publicClient.getBalance({ address: from })) + parseEther('1')),
  ]);
  try {
    const hash = await rpc<Hex>(rpcUrl, 'eth_sendTransaction', [
      { from, to, data: encodeFunctionData({ abi, functionName, args }), gas: numberToHex(500_000) },
    ]);
    const receipt = await waitForTransactionReceipt(publicClient, { hash });
    expect(receipt.status).toBe('success');
    return receipt;
  } finally {
    await rpc(rpcUrl, 'anvil_stopImpersonatingAccount', [from]);
  }
}
