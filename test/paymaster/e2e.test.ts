import { type Address, type Hex, encodeFunctionData, hexToBigInt, numberToHex, parseEventLogs } from 'viem';
import { type UserOperation, getUserOperationHash } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { readContract, waitForTransactionReceipt, writeContract } from 'viem/actions';
import { type EntryPointVersion, entryPointAbi } from '../../chain/entryPoints';
import { POSTOP_OVERHEAD_GAS, tokenAmountForGasCost } from '../../chain/paymasterData';
import { ManagedPaymasterV08, TestStablecoin } from '../../contracts/artifacts';
import { type TestApp, startTestApp } from '../harness/app';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { allowContract, createPaymasterClient, paymasterRpc, usageRows } from './paymasterApi';
import {
  ENTRY_POINTS,
  type SimpleAccount,
  deploySimpleAccountFactory,
  fundedWallet,
  newSimpleAccount,
  publicClientFor,
  toRpcUserOperation,
} from './smartAccounts';

/**
 * End to end on local chains with a real bundler (Alto): a SimpleAccount's first operation gets stub
 * data from our paymaster RPC, gas estimates through our bundler proxy, signed data from our RPC (the
 * real signing service), is sent through the proxy and included; the paymaster pays. Each case runs
 * on its own chain so cases never share a bundle.
 */

const stack = testStack();
let app: TestApp;
let merchant: SignedInMerchant;
let clientId: string;

beforeAll(async () => {
  app = await startTestApp();
  merchant = await signInNewMerchant(app);
  const client = await createPaymasterClient(app, merchant, {
    allowedChainIds: stack.chains.map((chain) => chain.chainId),
    gasMode: 'both',
  });
  clientId = client.clientId;
  // The call target of every operation below: the chain's local USDC.
  for (const chain of stack.chains) await allowContract(app, merchant, chain.chainId, chain.contracts.usdc!);
});

afterAll(async () => {
  await app?.close();
});

type Chain = (typeof stack.chains)[number];

/** POST /v1/paymaster/bundler/{chainId}: the JSON-RPC result, failing loudly on anything else. */
async function viaBundlerProxy<T>(chainId: number, method: string, params: unknown[]): Promise<T> {
  const response = await app.request(`/v1/paymaster/bundler/${chainId}`, {
    method: 'POST',
    headers: { 'x-client-id': clientId },
    json: { jsonrpc: '2.0', id: 1, method, params },
  });
  if (response.status !== 200 || response.body.error) {
    throw new Error(`${method} through the bundler proxy answered ${response.status}: ${response.text}`);
  }
  return response.body.result as T;
}

async function viaPaymasterRpc(method: string, params: unknown[]): Promise<Record<string, Hex>> {
  const response = await paymasterRpc(app, clientId, { jsonrpc: '2.0', id: 1, method, params });
  if (response.status !== 200 || response.body.error)
    throw new Error(`${method} answered ${response.status}: ${response.text}`);
  return response.body.result;
}

/** A well-formed ECDSA signature by a throwaway key: the account recovers a stranger and reports a failure instead of reverting. */
async function dummySignature(): Promise<Hex> {
  return privateKeyToAccount(generatePrivateKey()).signMessage({ message: 'gas estimation only' });
}

interface Included {
  userOpHash: Hex;
  operation: UserOperation<'0.7'>;
  receipt: { blockNumber: bigint; logs: Parameters<typeof parseEventLogs>[0]['logs'] };
}

/**
 * The wallet flow: gas price from the bundler, stub data, estimation through the proxy, signed data,
 * the owner's signature, submission through the proxy, and the receipt.
 */
async function sponsorAndSend(
  chain: Chain,
  account: SimpleAccount,
  callData: Hex,
  context?: { token: Address },
): Promise<Included> {
  const entryPoint = ENTRY_POINTS[account.version];
  const chainIdHex = numberToHex(chain.chainId);
  const prices = await viaBundlerProxy<{ fast: { maxFeePerGas: Hex; maxPriorityFeePerGas: Hex } }>(
    chain.chainId,
    'pimlico_getUserOperationGasPrice',
    [],
  );
  const draft: Partial<UserOperation<'0.7'>> = {
    sender: account.address,
    nonce: 0n,
    factory: account.factory,
    factoryData: account.factoryData,
    callData,
    maxFeePerGas: hexToBigInt(prices.fast.maxFeePerGas),
    maxPriorityFeePerGas: hexToBigInt(prices.fast.maxPriorityFeePerGas),
  };
  const rpcParams = (op: Partial<UserOperation<'0.7'>>) => [
    toRpcUserOperation(op),
    entryPoint,
    chainIdHex,
    ...(context ? [context] : []),
  ];

  const stub = await viaPaymasterRpc('pm_getPaymasterStubData', rpcParams(draft));
  const estimate = await viaBundlerProxy<Record<string, Hex>>(chain.chainId, 'eth_estimateUserOperationGas', [
    toRpcUserOperation({
      ...draft,
      callGasLimit: 0n,
      verificationGasLimit: 0n,
      preVerificationGas: 0n,
      paymaster: stub.paymaster as Address,
      paymasterData: stub.paymasterData,
      paymasterVerificationGasLimit: hexToBigInt(stub.paymasterVerificationGasLimit!),
      paymasterPostOpGasLimit: hexToBigInt(stub.paymasterPostOpGasLimit!),
      signature: await dummySignature(),
    }),
    entryPoint,
  ]);
  const estimated: Partial<UserOperation<'0.7'>> = {
    ...draft,
    callGasLimit: hexToBigInt(estimate.callGasLimit!),
    verificationGasLimit: hexToBigInt(estimate.verificationGasLimit!),
    preVerificationGas: hexToBigInt(estimate.preVerificationGas!),
    paymasterVerificationGasLimit: hexToBigInt(estimate.paymasterVerificationGasLimit!),
    paymasterPostOpGasLimit: hexToBigInt(estimate.paymasterPostOpGasLimit ?? '0x0'),
  };

  const signed = await viaPaymasterRpc('pm_getPaymasterData', rpcParams(estimated));
  expect(signed.paymaster).toBe(stub.paymaster);
  const operation = {
    ...estimated,
    paymaster: signed.paymaster as Address,
    paymasterData: signed.paymasterData!,
    paymasterVerificationGasLimit: hexToBigInt(signed.paymasterVerificationGasLimit!),
    paymasterPostOpGasLimit: hexToBigInt(signed.paymasterPostOpGasLimit!),
    signature: '0x',
  } as UserOperation<'0.7'>;
  operation.signature = await account.sign(operation, chain.chainId);

  const userOpHash = await viaBundlerProxy<Hex>(chain.chainId, 'eth_sendUserOperation', [
    toRpcUserOperation(operation),
    entryPoint,
  ]);
  expect(userOpHash).toBe(
    getUserOperationHash({
      userOperation: operation,
      entryPointAddress: entryPoint,
      entryPointVersion: account.version,
      chainId: chain.chainId,
    }),
  );
  const included = await waitForUserOperationReceipt(chain.chainId, userOpHash);
  return { userOpHash, operation, receipt: included };
}

async function waitForUserOperationReceipt(chainId: number, userOpHash: Hex) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const receipt = await viaBundlerProxy<{
      success: boolean;
      receipt: { blockNumber: Hex; logs: never[] };
    } | null>(chainId, 'eth_getUserOperationReceipt', [userOpHash]);
    if (receipt) {
      expect(receipt.success).toBe(true);
      return { blockNumber: hexToBigInt(receipt.receipt.blockNumber), logs: receipt.receipt.logs };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`user operation ${userOpHash} was not included within 30 s`);
}

async function depositAt(
  chain: Chain,
  version: EntryPointVersion,
  paymaster: Address,
  blockNumber: bigint,
): Promise<bigint> {
  return readContract(publicClientFor(chain.rpcUrl), {
    address: ENTRY_POINTS[version],
    abi: entryPointAbi,
    functionName: 'balanceOf',
    args: [paymaster],
    blockNumber,
  });
}

async function tokenBalanceAt(chain: Chain, holder: Address, blockNumber: bigint): Promise<bigint> {
  return readContract(publicClientFor(chain.rpcUrl), {
    address: chain.contracts.usdc!,
    abi: TestStablecoin.abi,
    functionName: 'balanceOf',
    args: [holder],
    blockNumber,
  });
}

/** Our operation's UserOperationEvent, and every event of the same paymaster in the inclusion block. */
async function paymasterEventsOfBlock(
  chain: Chain,
  version: EntryPointVersion,
  paymaster: Address,
  blockNumber: bigint,
) {
  const logs = await publicClientFor(chain.rpcUrl).getLogs({
    address: ENTRY_POINTS[version],
    fromBlock: blockNumber,
    toBlock: blockNumber,
  });
  return parseEventLogs({ abi: entryPointAbi, logs, eventName: 'UserOperationEvent' }).filter(
    (event) => event.args.paymaster === paymaster,
  );
}

async function newAccountOn(chain: Chain, version: EntryPointVersion): Promise<SimpleAccount> {
  const wallet = await fundedWallet(chain.rpcUrl, chain.chainId);
  const factory = await deploySimpleAccountFactory(wallet, version);
  return newSimpleAccount(publicClientFor(chain.rpcUrl), { version, factory });
}

const mintCall = (to: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: TestStablecoin.abi, functionName: 'mint', args: [to, amount] });

describe.each([
  ['0.7', 84532],
  ['0.8', 421614],
] as const)('a sponsored operation on EntryPoint v%s (chain %i)', (version, chainId) => {
  it('is estimated and sent through the proxy, included, and paid from the paymaster deposit by exactly its actualGasCost', async () => {
    const chain = stack.chains.find((candidate) => candidate.chainId === chainId)!;
    const account = await newAccountOn(chain, version);
    const paymaster = version === '0.7' ? chain.contracts.paymasterV07! : chain.contracts.paymasterV08!;

    const { userOpHash, receipt } = await sponsorAndSend(
      chain,
      account,
      account.execute(chain.contracts.usdc!, 0n, mintCall(account.address, 1_234n)),
    );

    // The call ran: the account (created by this operation) holds what it minted.
    expect(await tokenBalanceAt(chain, account.address, receipt.blockNumber)).toBe(1_234n);
    const events = await paymasterEventsOfBlock(chain, version, paymaster, receipt.blockNumber);
    const ours = events.find((event) => event.args.userOpHash === userOpHash);
    expect(ours?.args).toMatchObject({ sender: account.address, paymaster, success: true });
    // Exactly the gas of the operations it paid for in that block (ours alone, unless a bundle carried others).
    const paidInBlock = events.reduce((sum, event) => sum + event.args.actualGasCost, 0n);
    expect(await depositAt(chain, version, paymaster, receipt.blockNumber - 1n)).toBe(
      (await depositAt(chain, version, paymaster, receipt.blockNumber)) + paidInBlock,
    );
    if (events.length === 1) expect(paidInBlock).toBe(ours!.args.actualGasCost);

    const usage = await usageRows(app, merchant);
    // `submitted` until a receipt tracker (another test file's, on the same chains) records the inclusion.
    expect(usage.find((row) => row.userOpHash === userOpHash)).toMatchObject({
      status: expect.stringMatching(/^(submitted|onchain_success)$/),
      mode: 'sponsored',
      chainId,
    });
  });
});

describe.each(['0.7', '0.8'] as const)(
  'an ERC-20 operation on EntryPoint v%s (chain 11155111)',
  (version) => {
    it('pays its gas in the token: the sender loses exactly the amount the contract computed and the paymaster gains it', async () => {
      const chain = stack.chains.find((candidate) => candidate.chainId === 11155111)!;
      const paymaster = version === '0.7' ? chain.contracts.paymasterV07! : chain.contracts.paymasterV08!;
      const usdc = chain.contracts.usdc!;
      const rate = BigInt(stack.signer.erc20Tokens[String(chain.chainId)]![usdc]!);
      const account = await newAccountOn(chain, version);

      // The counterfactual account holds 50 USDC before it exists; its first operation approves the paymaster.
      const funder = await fundedWallet(chain.rpcUrl, chain.chainId);
      const minted = await writeContract(funder, {
        address: usdc,
        abi: TestStablecoin.abi,
        functionName: 'mint',
        args: [account.address, 50_000_000n],
      });
      await waitForTransactionReceipt(funder, { hash: minted });
      const approve = encodeFunctionData({
        abi: TestStablecoin.abi,
        functionName: 'approve',
        args: [paymaster, 2n ** 256n - 1n],
      });

      const { userOpHash, receipt } = await sponsorAndSend(
        chain,
        account,
        account.execute(usdc, 0n, approve),
        { token: usdc },
      );

      const logs = await publicClientFor(chain.rpcUrl).getLogs({
        address: paymaster,
        fromBlock: receipt.blockNumber,
        toBlock: receipt.blockNumber,
      });
      const charges = parseEventLogs({ abi: ManagedPaymasterV08.abi, logs, eventName: 'GasChargedInToken' });
      const ours = charges.find((event) => event.args.userOpHash === userOpHash)!;
      expect(ours.args).toMatchObject({ sender: account.address, token: usdc, exchangeRate: rate });
      const { actualGasCost, actualUserOpFeePerGas, tokenAmount } = ours.args;
      expect(tokenAmount).toBe(
        tokenAmountForGasCost(actualGasCost + POSTOP_OVERHEAD_GAS * actualUserOpFeePerGas, rate),
      );
      expect(tokenAmount).toBeGreaterThan(0n);

      const before = receipt.blockNumber - 1n;
      expect(await tokenBalanceAt(chain, account.address, before)).toBe(50_000_000n);
      expect(await tokenBalanceAt(chain, account.address, receipt.blockNumber)).toBe(
        50_000_000n - tokenAmount,
      );
      const chargedInBlock = charges
        .filter((event) => event.args.token === usdc)
        .reduce((sum, event) => sum + event.args.tokenAmount, 0n);
      expect(await tokenBalanceAt(chain, paymaster, receipt.blockNumber)).toBe(
        (await tokenBalanceAt(chain, paymaster, before)) + chargedInBlock,
      );
      if (charges.length === 1) expect(chargedInBlock).toBe(tokenAmount);

      // The gas itself came out of the deposit; the token charge is what the sender paid back.
      const events = await paymasterEventsOfBlock(chain, version, paymaster, receipt.blockNumber);
      expect(events.find((event) => event.args.userOpHash === userOpHash)?.args.success).toBe(true);
      expect(await depositAt(chain, version, paymaster, before)).toBe(
        (await depositAt(chain, version, paymaster, receipt.blockNumber)) +
          events.reduce((sum, event) => sum + event.args.actualGasCost, 0n),
      );
      const usage = await usageRows(app, merchant);
      expect(usage.find((row) => row.userOpHash === userOpHash)).toMatchObject({
        status: expect.stringMatching(/^(submitted|onchain_success)$/),
        mode: 'user_paid',
      });
    });
  },
);
