import { randomUUID } from 'node:crypto';
import {
  type Abi,
  type Account,
  type Address,
  type Chain,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  parseEventLogs,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { Forwarder, ForwarderFactory, LocalStakedUSDe, TestStablecoin } from '../../contracts/artifacts';
import { type LocalChainDeployment, deployLocalChain } from '../../dev/chains/deployLocalChain';
import { sessionIdToBytes16 } from '../../chain/depositAddress';
import { LOCAL_RELAYER, LOCAL_SETTLEMENT_OPERATOR } from '../../dev/chains/localSettlement';
import {
  ANVIL_DEV_ACCOUNTS,
  type StartAnvilChainsReturnType,
  startAnvilChains,
} from '../../dev/services/anvil';

/**
 * Anvil chains of their own (rates and vault prices are changed by the tests, which must not disturb the
 * shared stack) with everything deployLocalChain deploys, and the accounts the settlement tests act as.
 */

export const SETTLEMENT_CHAIN = 11155111;
export const LAYER2_CHAIN = 84532;

export const ACCOUNTS = {
  /** Deployed everything; owns the factory and the router. */
  owner: ANVIL_DEV_ACCOUNTS[0],
  /** Pays sessions. */
  payer: ANVIL_DEV_ACCOUNTS[2],
  attacker: ANVIL_DEV_ACCOUNTS[3],
  operator: LOCAL_SETTLEMENT_OPERATOR,
  relayer: LOCAL_RELAYER,
} as const;

export type Actor = keyof typeof ACCOUNTS;

export interface SettlementChain {
  chainId: number;
  rpcUrl: string;
  contracts: LocalChainDeployment;
  publicClient: PublicClient;
  wallet(actor: Actor): WalletClient<Transport, Chain, Account>;
}

export interface SettlementChains {
  chain(chainId: number): SettlementChain;
  stop(): Promise<void>;
}

export async function startSettlementChains(chainIds: number[]): Promise<SettlementChains> {
  const anvil: StartAnvilChainsReturnType = await startAnvilChains({
    chains: chainIds.map((chainId) => ({ chainId })),
    silent: true,
  });
  const chains = new Map<number, SettlementChain>();
  try {
    for (const { chainId, rpcUrl } of anvil.chains) {
      const contracts = await deployLocalChain({
        rpcUrl,
        chainId,
        deployerPrivateKey: ACCOUNTS.owner.privateKey,
      });
      const chain = defineChain({
        id: chainId,
        name: `test ${chainId}`,
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [rpcUrl] } },
      });
      const transport = http(rpcUrl);
      const wallets = new Map(
        Object.entries(ACCOUNTS).map(([actor, { privateKey }]) => [
          actor,
          createWalletClient({ chain, transport, account: privateKeyToAccount(privateKey) }),
        ]),
      );
      chains.set(chainId, {
        chainId,
        rpcUrl,
        contracts,
        publicClient: createPublicClient({ chain, transport, pollingInterval: 50 }),
        wallet: (actor) => wallets.get(actor)!,
      });
    }
  } catch (error) {
    await anvil.stop();
    throw error;
  }
  return {
    chain(chainId) {
      const chain = chains.get(chainId);
      if (!chain) throw new Error(`no chain ${chainId}`);
      return chain;
    },
    stop: () => anvil.stop(),
  };
}

/** A merchant payout address nobody has used (so its balances start at zero). */
export function freshAddress(): Address {
  return privateKeyToAccount(generatePrivateKey()).address;
}

/** Sends a contract call as `actor`, waits for it and fails the test when it reverts. */
export async function send<
  const abi extends Abi,
  functionName extends ContractFunctionName<abi, 'nonpayable' | 'payable'>,
>(
  chain: SettlementChain,
  actor: Actor,
  call: {
    address: Address;
    abi: abi;
    functionName: functionName;
    args: ContractFunctionArgs<abi, 'nonpayable' | 'payable', functionName>;
  },
) {
  const wallet = chain.wallet(actor);
  // viem's overloads do not narrow through a generic wrapper; the call shape is checked by the signature above.
  const hash = await wallet.writeContract({ ...call, account: wallet.account, chain: wallet.chain } as never);
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`${String(call.functionName)} reverted (${hash})`);
  return receipt;
}

/**
 * Proves a call is refused on-chain: its simulation reverts with `errorName` (and `errorArgs`, when
 * given), and the same call sent anyway (with a fixed gas limit, so nothing stops it before the chain)
 * is mined as reverted.
 */
export async function expectRevert<
  const abi extends Abi,
  functionName extends ContractFunctionName<abi, 'nonpayable' | 'payable'>,
>(
  chain: SettlementChain,
  actor: Actor,
  call: {
    address: Address;
    abi: abi;
    functionName: functionName;
    args: ContractFunctionArgs<abi, 'nonpayable' | 'payable', functionName>;
  },
  errorName: string,
  errorArgs?: readonly unknown[],
): Promise<void> {
  const wallet = chain.wallet(actor);
  const simulated = await chain.publicClient
    .simulateContract({ ...call, account: wallet.account } as never)
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(simulated).toBeInstanceOf(BaseError);
  const reverted = (simulated as BaseError).walk((cause) => cause instanceof ContractFunctionRevertedError);
  expect(reverted).toBeInstanceOf(ContractFunctionRevertedError);
  const data = (reverted as ContractFunctionRevertedError).data;
  expect(data?.errorName).toBe(errorName);
  if (errorArgs) expect(data?.args).toEqual(errorArgs);

  const hash = await wallet.writeContract({
    ...call,
    account: wallet.account,
    chain: wallet.chain,
    gas: 2_000_000n,
  } as never);
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('reverted');
}

/** Mints `amount` of a local stablecoin to the payer and transfers it to `to`, as a customer paying would. */
export async function pay(
  chain: SettlementChain,
  token: Address,
  to: Address,
  amount: bigint,
): Promise<void> {
  await send(chain, 'payer', {
    address: token,
    abi: TestStablecoin.abi,
    functionName: 'mint',
    args: [ACCOUNTS.payer.address, amount],
  });
  await send(chain, 'payer', {
    address: token,
    abi: TestStablecoin.abi,
    functionName: 'transfer',
    args: [to, amount],
  });
}

export function balanceOf(chain: SettlementChain, token: Address, holder: Address): Promise<bigint> {
  return chain.publicClient.readContract({
    address: token,
    abi: TestStablecoin.abi,
    functionName: 'balanceOf',
    args: [holder],
  });
}

export function previewDeposit(chain: SettlementChain, usdeAmount: bigint): Promise<bigint> {
  return chain.publicClient.readContract({
    address: chain.contracts.susde,
    abi: LocalStakedUSDe.abi,
    functionName: 'previewDeposit',
    args: [usdeAmount],
  });
}

export interface SessionForwarder {
  sessionId: Hex;
  merchant: Address;
  forwarder: Address;
}

/** The deposit address of a new session for a fresh merchant, predicted by `factory` (not yet deployed). */
export async function newSession(
  chain: SettlementChain,
  {
    merchant = freshAddress(),
    factory = chain.contracts.forwarderFactory,
  }: { merchant?: Address; factory?: Address } = {},
): Promise<SessionForwarder> {
  const sessionId = sessionIdToBytes16(randomUUID());
  const forwarder = await chain.publicClient.readContract({
    address: factory,
    abi: ForwarderFactory.abi,
    functionName: 'predict',
    args: [sessionId, merchant],
  });
  return { sessionId, merchant, forwarder };
}

/** Deploys the session's forwarder (anyone may; the payer does here). */
export async function deployForwarder(
  chain: SettlementChain,
  { sessionId, merchant }: SessionForwarder,
  factory: Address = chain.contracts.forwarderFactory,
): Promise<void> {
  await send(chain, 'payer', {
    address: factory,
    abi: ForwarderFactory.abi,
    functionName: 'deploy',
    args: [sessionId, merchant],
  });
}

/** Flushes `token` from `forwarder` as the operator and returns the `Flushed` event's arguments. */
export async function flush(chain: SettlementChain, forwarder: Address, token: Address, minUsdeOut: bigint) {
  const receipt = await send(chain, 'operator', {
    address: forwarder,
    abi: Forwarder.abi,
    functionName: 'flush',
    args: [token, minUsdeOut],
  });
  const flushed = parseEventLogs({ abi: Forwarder.abi, logs: receipt.logs, eventName: 'Flushed' });
  expect(flushed).toHaveLength(1);
  expect(flushed[0]!.address.toLowerCase()).toBe(forwarder.toLowerCase());
  return { receipt, flushed: flushed[0]!.args };
}
