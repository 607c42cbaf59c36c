import { type Address, parseEventLogs, parseUnits } from 'viem';
import { LocalStakedUSDeV2, TestStablecoin, YieldVault } from '../../contracts/artifacts';
import { ACCOUNTS, type Actor, type SettlementChain, balanceOf, send } from '../chain/settlementFixture';

/**
 * A yield vault over a LocalStakedUSDeV2 (Ethena's cooldown rules) on an anvil settlement chain, and the moves
 * the asynchronous-redemption tests make on it: deposits, requests, claims, rate increases, cooldown switches and
 * time travel.
 */

export const USDE = (amount: string): bigint => parseUnits(amount, 18);
export const SEVEN_DAYS = 7 * 24 * 3600;
export const DAY = 24 * 3600;

export interface AsyncVault {
  chain: SettlementChain;
  susde: Address;
  vault: Address;
}

async function deploy(chain: SettlementChain, abi: unknown, bytecode: `0x${string}`, args: unknown[]) {
  const wallet = chain.wallet('owner');
  const hash = await wallet.deployContract({
    abi,
    bytecode,
    args,
    account: wallet.account,
    chain: wallet.chain,
  } as never);
  return (await chain.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
}

/** A fresh sUSDe (cooldown `cooldownSec`, 1 USDe staked by its owner for the minimum supply) and a vault over it. */
export async function deployAsyncVault(
  chain: SettlementChain,
  cooldownSec = SEVEN_DAYS,
): Promise<AsyncVault> {
  const susde = await deploy(chain, LocalStakedUSDeV2.abi, LocalStakedUSDeV2.bytecode, [
    chain.contracts.usde,
    ACCOUNTS.owner.address,
  ]);
  const vault = await deploy(chain, YieldVault.abi, YieldVault.bytecode, [susde, 'Cooldown USDe', 'cUSDe']);
  const setup: AsyncVault = { chain, susde, vault };
  await mintUsde(chain, 'owner', USDE('1'));
  await send(chain, 'owner', {
    address: chain.contracts.usde,
    abi: TestStablecoin.abi,
    functionName: 'approve',
    args: [susde, USDE('1')],
  });
  await send(chain, 'owner', {
    address: susde,
    abi: LocalStakedUSDeV2.abi,
    functionName: 'deposit',
    args: [USDE('1'), ACCOUNTS.owner.address],
  });
  await setCooldown(setup, cooldownSec);
  return setup;
}

export const readVault = <T>(setup: AsyncVault, functionName: string, args: unknown[] = []): Promise<T> =>
  setup.chain.publicClient.readContract({
    address: setup.vault,
    abi: YieldVault.abi,
    functionName,
    args,
  } as never) as Promise<T>;

export async function setCooldown(setup: AsyncVault, seconds: number): Promise<void> {
  await send(setup.chain, 'owner', {
    address: setup.susde,
    abi: LocalStakedUSDeV2.abi,
    functionName: 'setCooldownDuration',
    args: [seconds],
  });
}

async function mintUsde(chain: SettlementChain, actor: Actor, amount: bigint): Promise<void> {
  await send(chain, actor, {
    address: chain.contracts.usde,
    abi: TestStablecoin.abi,
    functionName: 'mint',
    args: [ACCOUNTS[actor].address, amount],
  });
}

/** Deposits `assets` for `actor` and answers the shares it got. */
export async function deposit(setup: AsyncVault, actor: Actor, assets: bigint): Promise<bigint> {
  const { chain, vault } = setup;
  await mintUsde(chain, actor, assets);
  await send(chain, actor, {
    address: chain.contracts.usde,
    abi: TestStablecoin.abi,
    functionName: 'approve',
    args: [vault, assets],
  });
  const holder = ACCOUNTS[actor].address;
  const before = await readVault<bigint>(setup, 'balanceOf', [holder]);
  await send(chain, actor, {
    address: vault,
    abi: YieldVault.abi,
    functionName: 'deposit',
    args: [assets, holder],
  });
  return (await readVault<bigint>(setup, 'balanceOf', [holder])) - before;
}

/** Raises the sUSDe rate as yield does: USDe sent to sUSDe without shares. */
export async function addYield(setup: AsyncVault, amount: bigint): Promise<void> {
  await mintUsde(setup.chain, 'owner', amount);
  await send(setup.chain, 'owner', {
    address: setup.chain.contracts.usde,
    abi: TestStablecoin.abi,
    functionName: 'transfer',
    args: [setup.susde, amount],
  });
}

/** `actor` requests redemption of `shares` for itself; answers the request id and the block time. */
export async function requestRedeem(
  setup: AsyncVault,
  actor: Actor,
  shares: bigint,
): Promise<{ requestId: bigint; at: bigint }> {
  const holder = ACCOUNTS[actor].address;
  const receipt = await send(setup.chain, actor, {
    address: setup.vault,
    abi: YieldVault.abi,
    functionName: 'requestRedeem',
    args: [shares, holder, holder],
  });
  const [event] = parseEventLogs({ abi: YieldVault.abi, logs: receipt.logs, eventName: 'RedeemRequest' });
  const block = await setup.chain.publicClient.getBlock({ blockNumber: receipt.blockNumber });
  return { requestId: event!.args.requestId, at: block.timestamp };
}

/** Claims `shares` of `actor`'s claimable requests to itself; answers the USDe it received. */
export async function claimShares(setup: AsyncVault, actor: Actor, shares: bigint): Promise<bigint> {
  const holder = ACCOUNTS[actor].address;
  const before = await balanceOf(setup.chain, setup.chain.contracts.usde, holder);
  await send(setup.chain, actor, {
    address: setup.vault,
    abi: YieldVault.abi,
    functionName: 'redeem',
    args: [shares, holder, holder],
  });
  return (await balanceOf(setup.chain, setup.chain.contracts.usde, holder)) - before;
}

/** Moves the chain's clock forward (anvil) and mines a block at the new time. */
export async function travel(chain: SettlementChain, seconds: number): Promise<void> {
  await chain.publicClient.request({ method: 'evm_increaseTime', params: [seconds] } as never);
  await chain.publicClient.request({ method: 'evm_mine', params: [] } as never);
}

/** Travels to exactly `timestamp` (the next mined block carries it). */
export async function travelTo(chain: SettlementChain, timestamp: bigint): Promise<void> {
  await chain.publicClient.request({
    method: 'evm_setNextBlockTimestamp',
    params: [`0x${timestamp.toString(16)}`],
  } as never);
  await chain.publicClient.request({ method: 'evm_mine', params: [] } as never);
}

export async function latestTimestamp(chain: SettlementChain): Promise<bigint> {
  return (await chain.publicClient.getBlock()).timestamp;
}
