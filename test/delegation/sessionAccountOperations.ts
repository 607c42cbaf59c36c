import { type Address, type Hex, decodeErrorResult, hexToBigInt, numberToHex, parseEther } from 'viem';
import { type UserOperation, entryPoint07Abi } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { encodeDeleGatorExecute, signDeleGatorUserOperation } from '../../chain/deleGatorAccounts';
import { encodeRedeemDelegation } from '../../chain/delegations';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import { type SimpleAccount, publicClientFor, rpc, toRpcUserOperation } from '../paymaster/smartAccounts';
import { type LocalChain, frameworkOn, usdcTransfer } from './delegatorAccounts';

/**
 * A session key redeeming its ERC-7715 permission the way an agent does without any paymaster: its own
 * DeleGator account (created by its first operation) sends a user operation through the chain's Alto
 * bundler, paying its own gas, whose call is `redeemDelegations` on the delegation manager with the
 * grant's permission context and one USDC `transfer`.
 */

export interface SessionAccount {
  /** The session key (from the credentials file). */
  privateKey: Hex;
  address: Address;
  factory: Address;
  factoryData: Hex;
}

/** The bundler refused the operation (simulation or validation); `message` is Alto's, with a revert reason decoded. */
export class BundlerRefusal extends Error {
  override name = 'BundlerRefusal';
  constructor(message: string) {
    const encoded = /0x08c379a0[0-9a-fA-F]*/.exec(message)?.[0] as Hex | undefined;
    const reason = encoded ? decodeErrorResult({ abi: [], data: encoded }).args?.[0] : undefined;
    super(reason ? `${message} (reverted: ${String(reason)})` : message);
  }
}

/** Gives the session account ether for its own gas (no paymaster is involved). */
export async function fundSessionAccount(chain: LocalChain, account: SessionAccount): Promise<void> {
  await rpc(chain.rpcUrl, 'anvil_setBalance', [account.address, numberToHex(parseEther('1'))]);
}

/**
 * Sends one delegated USDC transfer of `amount` to `payee` from the delegator, under `permissionContext`,
 * and waits for its inclusion. Throws BundlerRefusal when Alto refuses it (e.g. the allowance is spent).
 */
export async function redeemTransferThroughAlto(
  chain: LocalChain,
  account: SessionAccount,
  { permissionContext, payee, amount }: { permissionContext: Hex; payee: Address; amount: bigint },
): Promise<{ success: boolean; transactionHash: Hex }> {
  const bundler = (method: string, params: unknown[]) =>
    rpc<unknown>(chain.bundlerUrl, method, params).catch((error: Error) => {
      throw new BundlerRefusal(error.message);
    });
  const client = publicClientFor(chain.rpcUrl);
  const code = await client.getCode({ address: account.address });
  const deployed = code !== undefined && code !== '0x';
  const nonce = await client.readContract({
    address: ENTRY_POINT_V07_ADDRESS,
    abi: entryPoint07Abi,
    functionName: 'getNonce',
    args: [account.address, 0n],
  });
  const prices = (await bundler('pimlico_getUserOperationGasPrice', [])) as {
    fast: { maxFeePerGas: Hex; maxPriorityFeePerGas: Hex };
  };
  const draft: UserOperation<'0.7'> = {
    sender: account.address,
    nonce,
    ...(deployed ? {} : { factory: account.factory, factoryData: account.factoryData }),
    callData: encodeDeleGatorExecute({
      target: frameworkOn(chain).delegationManager,
      value: 0n,
      data: encodeRedeemDelegation({
        permissionContext,
        execution: { target: chain.contracts.usdc!, value: 0n, data: usdcTransfer(payee, amount) },
      }),
    }),
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: hexToBigInt(prices.fast.maxFeePerGas),
    maxPriorityFeePerGas: hexToBigInt(prices.fast.maxPriorityFeePerGas),
    // A stranger's signature: the account reports a failed validation instead of reverting, as estimation needs.
    signature: await privateKeyToAccount(generatePrivateKey()).sign({ hash: `0x${'11'.repeat(32)}` }),
  };
  const estimate = (await bundler('eth_estimateUserOperationGas', [
    toRpcUserOperation(draft),
    ENTRY_POINT_V07_ADDRESS,
  ])) as Record<string, Hex>;
  const operation: UserOperation<'0.7'> = {
    ...draft,
    callGasLimit: hexToBigInt(estimate.callGasLimit!),
    verificationGasLimit: hexToBigInt(estimate.verificationGasLimit!),
    preVerificationGas: hexToBigInt(estimate.preVerificationGas!),
  };
  operation.signature = await signDeleGatorUserOperation({
    owner: privateKeyToAccount(account.privateKey),
    userOperation: operation,
    chainId: chain.chainId,
    entryPoint: ENTRY_POINT_V07_ADDRESS,
  });
  const userOpHash = (await bundler('eth_sendUserOperation', [
    toRpcUserOperation(operation),
    ENTRY_POINT_V07_ADDRESS,
  ])) as Hex;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const receipt = (await bundler('eth_getUserOperationReceipt', [userOpHash])) as {
      success: boolean;
      receipt: { transactionHash: Hex };
    } | null;
    if (receipt) return { success: receipt.success, transactionHash: receipt.receipt.transactionHash };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`user operation ${userOpHash} was not included within 30 s`);
}

/**
 * The session account as the sender of sponsored operations (test/paymaster/sponsoredOperations.ts): a
 * HybridDeleGator on EntryPoint v0.7 whose user operations the session key signs (EIP-712, its own domain).
 */
export function sessionAccountAsSender(account: SessionAccount): SimpleAccount {
  const sessionKey = privateKeyToAccount(account.privateKey);
  return {
    version: '0.7',
    owner: sessionKey,
    address: account.address,
    factory: account.factory,
    factoryData: account.factoryData,
    execute: () => {
      throw new Error('a session account only calls the delegation manager: give its call data');
    },
    sign: (userOperation, chainId) =>
      signDeleGatorUserOperation({
        owner: sessionKey,
        userOperation,
        chainId,
        entryPoint: ENTRY_POINT_V07_ADDRESS,
      }),
  };
}
