import { type Address, type Hex, encodeFunctionData, hexToBigInt, numberToHex, parseEventLogs } from 'viem';
import type { UserOperation } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type EntryPointVersion, entryPointAbi } from '../../chain/entryPoints';
import { TestStablecoin } from '../../contracts/artifacts';
import type { TestApp } from '../harness/app';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';
import { type TestStack, testStack } from '../harness/stack';
import { allowContract, bundlerProxyResult, createPaymasterClient, paymasterRpcResult } from './paymasterApi';
import { ENTRY_POINTS, type SimpleAccount, publicClientFor, toRpcUserOperation } from './smartAccounts';

/**
 * Real sponsored operations on the local chains, the way a wallet gets them included through our API:
 * gas prices and estimates through the bundler proxy (Alto behind it), stub and signed data from our
 * paymaster RPC, the owner's signature, submission through the proxy, the receipt. The operations call
 * each chain's local USDC, which the merchant's paymaster client sponsors.
 */

export type LocalChain = TestStack['chains'][number];

/** Our API as one paymaster client (`x-client-id`) calls it. */
export interface PaymasterClientApi {
  app: TestApp;
  clientId: string;
}

export interface SponsoringMerchant extends PaymasterClientApi {
  merchant: SignedInMerchant;
}

/**
 * A new merchant whose paymaster client sponsors calls to every local chain's USDC, in both gas modes;
 * `clientFields` adds to the client it creates (e.g. its label).
 */
export async function signInSponsoringMerchant(
  app: TestApp,
  clientFields: Record<string, unknown> = {},
): Promise<SponsoringMerchant> {
  const { chains } = testStack();
  const merchant = await signInNewMerchant(app);
  const client = await createPaymasterClient(app, merchant, {
    ...clientFields,
    allowedChainIds: chains.map((chain) => chain.chainId),
    gasMode: 'both',
  });
  for (const chain of chains) await allowContract(app, merchant, chain.chainId, chain.contracts.usdc!);
  return { app, merchant, clientId: client.clientId };
}

/** Calldata for the local USDC (a TestStablecoin: anyone may mint). */
export const usdcCall = (functionName: 'mint' | 'transfer', to: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: TestStablecoin.abi, functionName, args: [to, amount] });

export interface SponsorOperationOptions {
  /** The call to estimate instead of the real one, when the real one would revert in estimation. */
  estimateWith?: Hex;
  /** 20 % over the call and pre-verification gas estimates: the signed calldata may differ from the estimated one. */
  gasMargin?: boolean;
  /** The paymaster context of both pm_ calls (ERC-20 mode: the token that pays the gas). */
  context?: { token: Address };
  /** The account's nonce; 0 (its first operation, which creates it) by default. */
  nonce?: bigint;
  /** Fees instead of the bundler's `fast` gas price. */
  fees?: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
}

export interface SponsoredOperation {
  /** Signed by the paymaster and by the account's owner, ready to send. */
  operation: UserOperation<'0.7'>;
  /** What pm_getPaymasterStubData answered. */
  stub: Record<string, Hex>;
  /** The params pm_getPaymasterData was called with (to repeat the request). */
  signParams: unknown[];
}

const withMargin = (value: Hex) => (hexToBigInt(value) * 12n) / 10n;

/**
 * The wallet flow up to a signed operation (the account's first, which creates it): the bundler's gas
 * price, stub data, estimation through the proxy, paymaster data from our RPC, the owner's signature.
 */
export async function sponsorOperation(
  { app, clientId }: PaymasterClientApi,
  chain: LocalChain,
  account: SimpleAccount,
  callData: Hex,
  { estimateWith = callData, gasMargin = false, context, nonce = 0n, fees }: SponsorOperationOptions = {},
): Promise<SponsoredOperation> {
  const entryPoint = ENTRY_POINTS[account.version];
  const prices = await bundlerProxyResult<{ fast: { maxFeePerGas: Hex; maxPriorityFeePerGas: Hex } }>(
    app,
    clientId,
    chain.chainId,
    'pimlico_getUserOperationGasPrice',
    [],
  );
  const draft: Partial<UserOperation<'0.7'>> = {
    sender: account.address,
    nonce,
    // Only the first operation creates the account.
    ...(nonce === 0n && { factory: account.factory, factoryData: account.factoryData }),
    callData: estimateWith,
    maxFeePerGas: fees?.maxFeePerGas ?? hexToBigInt(prices.fast.maxFeePerGas),
    maxPriorityFeePerGas: fees?.maxPriorityFeePerGas ?? hexToBigInt(prices.fast.maxPriorityFeePerGas),
  };
  const rpcParams = (op: Partial<UserOperation<'0.7'>>) => [
    toRpcUserOperation(op),
    entryPoint,
    numberToHex(chain.chainId),
    ...(context ? [context] : []),
  ];
  const stub = await paymasterRpcResult(app, clientId, 'pm_getPaymasterStubData', rpcParams(draft));
  const estimate = await bundlerProxyResult<Record<string, Hex>>(
    app,
    clientId,
    chain.chainId,
    'eth_estimateUserOperationGas',
    [
      toRpcUserOperation({
        ...draft,
        callGasLimit: 0n,
        verificationGasLimit: 0n,
        preVerificationGas: 0n,
        paymaster: stub.paymaster as Address,
        paymasterData: stub.paymasterData,
        paymasterVerificationGasLimit: hexToBigInt(stub.paymasterVerificationGasLimit!),
        paymasterPostOpGasLimit: hexToBigInt(stub.paymasterPostOpGasLimit!),
        // A well-formed signature by a throwaway key: the account recovers a stranger and reports a failure instead of reverting.
        signature: await privateKeyToAccount(generatePrivateKey()).signMessage({
          message: 'estimation only',
        }),
      }),
      entryPoint,
    ],
  );
  const estimated: Partial<UserOperation<'0.7'>> = {
    ...draft,
    callData,
    callGasLimit: gasMargin ? withMargin(estimate.callGasLimit!) : hexToBigInt(estimate.callGasLimit!),
    verificationGasLimit: hexToBigInt(estimate.verificationGasLimit!),
    preVerificationGas: gasMargin
      ? withMargin(estimate.preVerificationGas!)
      : hexToBigInt(estimate.preVerificationGas!),
    paymasterVerificationGasLimit: hexToBigInt(estimate.paymasterVerificationGasLimit!),
    paymasterPostOpGasLimit: hexToBigInt(estimate.paymasterPostOpGasLimit ?? '0x0'),
  };
  const signParams = rpcParams(estimated);
  const signed = await paymasterRpcResult(app, clientId, 'pm_getPaymasterData', signParams);
  const operation = await signedWithPaymasterResult(account, chain.chainId, estimated, signed);
  return { operation, stub, signParams };
}

/** The operation with our RPC's paymaster fields, signed by the account's owner: ready to send. */
export async function signedWithPaymasterResult(
  account: SimpleAccount,
  chainId: number,
  operation: Partial<UserOperation<'0.7'>>,
  paymasterResult: Record<string, Hex>,
): Promise<UserOperation<'0.7'>> {
  const withPaymaster = {
    ...operation,
    paymaster: paymasterResult.paymaster as Address,
    paymasterData: paymasterResult.paymasterData!,
    paymasterVerificationGasLimit: hexToBigInt(paymasterResult.paymasterVerificationGasLimit!),
    paymasterPostOpGasLimit: hexToBigInt(paymasterResult.paymasterPostOpGasLimit!),
    signature: '0x',
  } as UserOperation<'0.7'>;
  return { ...withPaymaster, signature: await account.sign(withPaymaster, chainId) };
}

export interface Inclusion {
  /** As eth_sendUserOperation answered it. */
  userOpHash: Hex;
  /** Whether the operation's call succeeded (the paymaster pays either way). */
  success: boolean;
  transactionHash: Hex;
  blockNumber: bigint;
}

/** Sends the operation through the bundler proxy and waits (up to 30 s) for its receipt there. */
export async function sendAndWait(
  { app, clientId }: PaymasterClientApi,
  chain: LocalChain,
  version: EntryPointVersion,
  operation: UserOperation<'0.7'>,
): Promise<Inclusion> {
  const userOpHash = await bundlerProxyResult<Hex>(app, clientId, chain.chainId, 'eth_sendUserOperation', [
    toRpcUserOperation(operation),
    ENTRY_POINTS[version],
  ]);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const receipt = await bundlerProxyResult<{
      success: boolean;
      receipt: { blockNumber: Hex; transactionHash: Hex };
    } | null>(app, clientId, chain.chainId, 'eth_getUserOperationReceipt', [userOpHash]);
    if (receipt) {
      return {
        userOpHash,
        success: receipt.success,
        transactionHash: receipt.receipt.transactionHash,
        blockNumber: hexToBigInt(receipt.receipt.blockNumber),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`user operation ${userOpHash} was not included within 30 s`);
}

/** The operation's UserOperationEvent, read straight from the EntryPoint. */
export async function userOperationEvent(
  chain: LocalChain,
  version: EntryPointVersion,
  inclusion: Inclusion,
) {
  const logs = await publicClientFor(chain.rpcUrl).getLogs({
    address: ENTRY_POINTS[version],
    fromBlock: inclusion.blockNumber,
    toBlock: inclusion.blockNumber,
  });
  return parseEventLogs({ abi: entryPointAbi, logs, eventName: 'UserOperationEvent' }).find(
    (event) => event.args.userOpHash === inclusion.userOpHash,
  )!;
}
