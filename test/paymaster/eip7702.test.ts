import simple7702Account from '@account-abstraction/contracts/artifacts/Simple7702Account.json';
import {
  type Address,
  type Hex,
  concat,
  encodeFunctionData,
  hexToBigInt,
  numberToHex,
  parseEventLogs,
} from 'viem';
import {
  type UserOperation,
  entryPoint08Abi,
  getUserOperationHash,
  toPackedUserOperation,
} from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { simulateContract, waitForTransactionReceipt, writeContract } from 'viem/actions';
import { deployDeterministic } from '../../chain/deterministicDeployer';
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS, entryPointAbi } from '../../chain/entryPoints';
import { type TestApp, startTestApp } from '../harness/app';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { allowContract, createPaymasterClient, paymasterRpc, paymasterRpcResult } from './paymasterApi';
import { fundedWallet, publicClientFor, rpc, simpleAccountAbi, toRpcUserOperation } from './smartAccounts';
import { usdcCall } from './sponsoredOperations';

/**
 * Issue 13, finding 5: on EntryPoint v0.8 an EIP-7702 operation (initCode starting with the 0x7702
 * marker) has a userOpHash over the account's delegate. The paymaster's signed hash covered the marker
 * but not the delegate, and the API took the delegate the caller claimed, so a caller could claim one
 * delegate, run under another, and leave a usage row whose hash no UserOperationEvent ever matches.
 * The paymaster now signs over the delegate the account really has (read from its code on-chain), so a
 * false claim fails validation, and a true one is included under the hash the API recorded.
 *
 * The EOA's delegation is set with anvil_setCode (the 0xef0100 designator, as an EIP-7702 authorization
 * leaves it); the operations go to EntryPoint.handleOps directly, as any bundler would send them.
 */

const CHAIN_ID = 84532;
/** The 20-byte initCode marker of an EIP-7702 operation (wallets may also send it as `0x7702`). */
const MARKER: Address = '0x7702000000000000000000000000000000000000';

const chain = testStack().chains.find((candidate) => candidate.chainId === CHAIN_ID)!;
const publicClient = publicClientFor(chain.rpcUrl);
let app: TestApp;
let merchant: SignedInMerchant;
let clientId: string;
let delegate: Address;
let bundler: Awaited<ReturnType<typeof fundedWallet>>;

beforeAll(async () => {
  app = await startTestApp({ LOG_LEVEL: 'warn' });
  merchant = await signInNewMerchant(app);
  ({ clientId } = await createPaymasterClient(app, merchant, { allowedChainIds: [CHAIN_ID] }));
  await allowContract(app, merchant, CHAIN_ID, chain.contracts.usdc!);
  bundler = await fundedWallet(chain.rpcUrl, CHAIN_ID);
  delegate = await deployDeterministic(bundler, {
    initCode: simple7702Account.bytecode as Hex,
    salt: `0x${'77'.repeat(32)}`,
  });
});
afterAll(() => app.close());

/** A fresh EOA whose code delegates to `to` (EIP-7702), and its first operation minting 5 USDC to itself. */
async function delegatedAccount(to: Address) {
  const owner = privateKeyToAccount(generatePrivateKey());
  await rpc(chain.rpcUrl, 'anvil_setCode', [owner.address, concat(['0xef0100', to])]);
  const { baseFeePerGas } = await publicClient.getBlock();
  const operation: UserOperation<'0.8'> = {
    sender: owner.address,
    nonce: 0n,
    factory: MARKER,
    factoryData: '0x',
    callData: encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: 'execute',
      args: [chain.contracts.usdc!, 0n, usdcCall('mint', owner.address, 5n)],
    }),
    callGasLimit: 100_000n,
    verificationGasLimit: 150_000n,
    preVerificationGas: 60_000n,
    maxFeePerGas: (baseFeePerGas ?? 0n) * 2n + 1_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    signature: '0x',
  };
  return { owner, operation };
}

const R: Hex = `0x${'11'.repeat(32)}`;
const S: Hex = `0x${'22'.repeat(32)}`;
/** An authorization as wallets put it in `eip7702Auth` (only its address matters to the hashes). */
const authorizationFor = (address: Address) => ({
  address,
  chainId: numberToHex(CHAIN_ID),
  nonce: '0x0',
  r: R,
  s: S,
  yParity: '0x0',
});

/** Signed paymaster data from our RPC for the operation, claiming `claimedDelegate`; and the hash it recorded. */
async function sponsored(operation: UserOperation<'0.8'>, claimedDelegate: Address) {
  const result = await paymasterRpcResult(app, clientId, 'pm_getPaymasterData', [
    { ...toRpcUserOperation(operation), eip7702Auth: authorizationFor(claimedDelegate) },
    ENTRY_POINT_V08_ADDRESS,
    CHAIN_ID,
  ]);
  const row = await app.db
    .selectFrom('paymaster_usage')
    .select('user_op_hash')
    .where('merchant_id', '=', merchant.merchantId)
    .where('sender', '=', operation.sender.toLowerCase())
    .executeTakeFirstOrThrow();
  const withPaymaster: UserOperation<'0.8'> = {
    ...operation,
    paymaster: result.paymaster as Address,
    paymasterData: result.paymasterData!,
    paymasterVerificationGasLimit: hexToBigInt(result.paymasterVerificationGasLimit!),
    paymasterPostOpGasLimit: hexToBigInt(result.paymasterPostOpGasLimit!),
  };
  return { withPaymaster, recordedHash: row.user_op_hash! };
}

/** The EOA signs the hash the EntryPoint computes (over its real delegate) and a bundler submits the operation. */
async function submit(owner: ReturnType<typeof privateKeyToAccount>, operation: UserOperation<'0.8'>) {
  const userOpHash = getUserOperationHash({
    userOperation: {
      ...operation,
      authorization: { ...authorizationFor(delegate), chainId: CHAIN_ID, nonce: 0, yParity: 0 },
    },
    entryPointAddress: ENTRY_POINT_V08_ADDRESS,
    entryPointVersion: '0.8',
    chainId: CHAIN_ID,
  });
  const signed = { ...operation, signature: await owner.sign({ hash: userOpHash }) };
  const { request } = await simulateContract(bundler, {
    address: ENTRY_POINT_V08_ADDRESS,
    abi: entryPoint08Abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation(signed)], bundler.account.address],
  });
  const receipt = await waitForTransactionReceipt(bundler, { hash: await writeContract(bundler, request) });
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  return { userOpHash, event };
}

describe('issue 13 finding 5: EIP-7702 operations on EntryPoint v0.8 can be made unbillable', () => {
  it('paymaster data signed for a claimed delegate does not validate for an account delegated elsewhere', async () => {
    const { owner, operation } = await delegatedAccount(delegate);
    const claimed = privateKeyToAccount(generatePrivateKey()).address;
    const { withPaymaster } = await sponsored(operation, claimed);
    await expect(submit(owner, withPaymaster)).rejects.toThrow(/AA34 signature error/);
  });

  it('with the true delegate the operation is included under exactly the hash its usage row recorded', async () => {
    const { owner, operation } = await delegatedAccount(delegate);
    const { withPaymaster, recordedHash } = await sponsored(operation, delegate);
    const { userOpHash, event } = await submit(owner, withPaymaster);
    expect(event?.args).toMatchObject({ userOpHash, sender: owner.address, success: true });
    expect(recordedHash).toBe(userOpHash.toLowerCase());
  });

  it('an EIP-7702 operation needs its delegate and EntryPoint v0.8: the API refuses it otherwise', async () => {
    const { operation } = await delegatedAccount(delegate);
    const request = (entryPoint: Address, userOp: Record<string, unknown>) =>
      paymasterRpc(app, clientId, {
        jsonrpc: '2.0',
        id: 1,
        method: 'pm_getPaymasterData',
        params: [userOp, entryPoint, CHAIN_ID],
      });
    const withoutDelegate = await request(ENTRY_POINT_V08_ADDRESS, toRpcUserOperation(operation));
    expect(withoutDelegate.body.error).toEqual({
      code: -32602,
      message:
        'Invalid params: userOp.eip7702Auth.address (the delegate) is required when factory is the EIP-7702 marker',
    });
    const onV07 = await request(ENTRY_POINT_V07_ADDRESS, {
      ...toRpcUserOperation(operation),
      eip7702Auth: authorizationFor(delegate),
    });
    expect(onV07.body.error).toEqual({
      code: -32602,
      message: 'Invalid params: EIP-7702 operations (factory 0x7702) need EntryPoint v0.8',
    });
  });
});
