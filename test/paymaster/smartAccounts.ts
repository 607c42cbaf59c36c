import simpleAccountFactoryV08 from '@account-abstraction/contracts/artifacts/SimpleAccountFactory.json';
import simpleAccountFactoryV07 from '@account-abstraction/contracts-v07/artifacts/SimpleAccountFactory.json';
import {
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type PublicClient,
  type Transport,
  createNonceManager,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  numberToHex,
  parseAbi,
  parseEther,
} from 'viem';
import { type UserOperation, getUserOperationHash } from 'viem/account-abstraction';
import { type PrivateKeyAccount, generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { jsonRpc } from 'viem/nonce';
import { deployDeterministic } from '../../chain/deterministicDeployer';
import { withSendsInNonceOrder } from '../../dev/chains/sendsInNonceOrder';
import {
  ENTRY_POINT_V07_ADDRESS,
  ENTRY_POINT_V08_ADDRESS,
  type EntryPointVersion,
} from '../../chain/entryPoints';

/**
 * SimpleAccount (the eth-infinitism sample account) for paymaster tests, from the npm artifacts:
 * 0.7.0 for EntryPoint v0.7, 0.8.0 for v0.8. Factories go through the deterministic deployer, so
 * every test file finds the same factory on a chain whoever deployed it first.
 */

export const simpleAccountAbi = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
]);

const FACTORY_ARTIFACTS: Record<EntryPointVersion, { bytecode: string }> = {
  '0.7': simpleAccountFactoryV07,
  '0.8': simpleAccountFactoryV08,
};
export const ENTRY_POINTS: Record<EntryPointVersion, Address> = {
  '0.7': ENTRY_POINT_V07_ADDRESS,
  '0.8': ENTRY_POINT_V08_ADDRESS,
};
const FACTORY_SALT: Hex = '0x0000000000000000000000000000000000000000000000000000000000004337';

/** A fresh key funded with ether on the chain: its own nonces, so parallel test files never collide. */
export async function fundedWallet(
  rpcUrl: string,
  chainId: number,
): Promise<Client<Transport, Chain, Account>> {
  const account = privateKeyToAccount(generatePrivateKey(), {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  await rpc(rpcUrl, 'anvil_setBalance', [account.address, numberToHex(parseEther('100'))]);
  const chain = defineChain({
    id: chainId,
    name: `local ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return withSendsInNonceOrder(
    createWalletClient({ account, chain, transport: http(rpcUrl), pollingInterval: 100 }),
  );
}

export function publicClientFor(rpcUrl: string): PublicClient {
  return createPublicClient({ transport: http(rpcUrl), pollingInterval: 100 }) as PublicClient;
}

/** Deploys the SimpleAccountFactory of `version` (when absent) and returns its address. */
export async function deploySimpleAccountFactory(
  client: Client<Transport, Chain, Account>,
  version: EntryPointVersion,
): Promise<Address> {
  const args = encodeAbiParameters([{ type: 'address' }], [ENTRY_POINTS[version]]);
  return deployDeterministic(client, {
    initCode: `${FACTORY_ARTIFACTS[version].bytecode}${args.slice(2)}` as Hex,
    salt: FACTORY_SALT,
  });
}

export interface SimpleAccount {
  version: EntryPointVersion;
  owner: PrivateKeyAccount;
  address: Address;
  /** initCode parts for the first operation (the account is created by it). */
  factory: Address;
  factoryData: Hex;
  /** callData of `execute(target, value, data)`. */
  execute(target: Address, value: bigint, data: Hex): Hex;
  /** The owner's signature over the EntryPoint's user operation hash (v0.7: EIP-191 prefixed; v0.8: EIP-712 digest). */
  sign(userOperation: UserOperation<'0.7'>, chainId: number): Promise<Hex>;
}

/** A counterfactual SimpleAccount of a fresh owner (not deployed: the first operation creates it). */
export async function newSimpleAccount(
  publicClient: PublicClient,
  { version, factory }: { version: EntryPointVersion; factory: Address },
): Promise<SimpleAccount> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const address = await publicClient.readContract({
    address: factory,
    abi: simpleAccountAbi,
    functionName: 'getAddress',
    args: [owner.address, 0n],
  });
  return {
    version,
    owner,
    address,
    factory,
    factoryData: encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: 'createAccount',
      args: [owner.address, 0n],
    }),
    execute: (target, value, data) =>
      encodeFunctionData({ abi: simpleAccountAbi, functionName: 'execute', args: [target, value, data] }),
    async sign(userOperation, chainId) {
      const hash = getUserOperationHash({
        userOperation: { ...userOperation, signature: '0x' },
        entryPointAddress: ENTRY_POINTS[version],
        entryPointVersion: version,
        chainId,
      });
      return version === '0.7' ? owner.signMessage({ message: { raw: hash } }) : owner.sign({ hash });
    },
  };
}

/** A counterfactual SimpleAccount of a fresh owner on the chain, its factory deployed by a freshly funded wallet. */
export async function newAccountOn(
  chain: { rpcUrl: string; chainId: number },
  version: EntryPointVersion,
): Promise<SimpleAccount> {
  const wallet = await fundedWallet(chain.rpcUrl, chain.chainId);
  const factory = await deploySimpleAccountFactory(wallet, version);
  return newSimpleAccount(publicClientFor(chain.rpcUrl), { version, factory });
}

/** A user operation in the bundler RPC shape (0x quantities), as wallets send it. */
export type RpcUserOperation = Record<string, string>;

export function toRpcUserOperation(userOperation: Partial<UserOperation<'0.7'>>): RpcUserOperation {
  return Object.fromEntries(
    Object.entries(userOperation)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key, typeof value === 'bigint' ? numberToHex(value) : String(value)]),
  );
}

export async function rpc<T = unknown>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
