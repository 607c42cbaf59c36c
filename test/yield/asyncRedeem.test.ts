import { type Address, encodeFunctionData } from 'viem';
import { LocalStakedUSDeV2, TestStablecoin, TransferHookToken, YieldVault } from '../../contracts/artifacts';
import {
  ACCOUNTS,
  SETTLEMENT_CHAIN,
  balanceOf,
  type SettlementChain,
  type SettlementChains,
  expectRevert,
  send,
  startSettlementChains,
} from '../chain/settlementFixture';
import {
  type AsyncVault,
  DAY,
  SEVEN_DAYS,
  USDE,
  addYield,
  claimShares,
  deployAsyncVault,
  deposit,
  readVault,
  requestRedeem,
  setCooldown,
  travel,
  travelTo,
} from './asyncVaultChain';

/**
 * Issue 32: the yield vault over an sUSDe with Ethena's withdrawal cooldown (LocalStakedUSDeV2) redeems
 * asynchronously (ERC-7540). Each request has its own cooldown (its own unstaker clone), claims pay exactly the
 * assets the shares were worth at the request, and nobody touches another's request. Time travel on anvil.
 */

const A = ACCOUNTS.payer.address;
const B = ACCOUNTS.attacker.address;
const C = ACCOUNTS.operator.address;

let chains: SettlementChains;
let chain: SettlementChain;

beforeAll(async () => {
  chains = await startSettlementChains([SETTLEMENT_CHAIN]);
  chain = chains.chain(SETTLEMENT_CHAIN);
}, 240_000);

afterAll(async () => {
  await chains?.stop();
});

const requestState = async (setup: AsyncVault, requestId: bigint) => {
  const [controller, shares, assets, claimableAt] = await readVault<[string, bigint, bigint, bigint]>(
    setup,
    'redeemRequest',
    [requestId],
  );
  return { controller, shares, assets, claimableAt };
};

describe('ERC-165 and the synchronous path', () => {
  it('reports ERC-165, ERC-7575 and the ERC-7540 operator interface always, the ERC-7540 redeem interface while the cooldown is on', async () => {
    const setup = await deployAsyncVault(chain);
    const supports = (id: string) => readVault<boolean>(setup, 'supportsInterface', [id]);
    expect(await supports('0x01ffc9a7')).toBe(true);
    expect(await supports('0x2f0a18c5')).toBe(true);
    expect(await supports('0xe3bc4e65')).toBe(true);
    expect(await supports('0x620ee8e4')).toBe(true);
    expect(await supports('0x12345678')).toBe(false);
    await setCooldown(setup, 0);
    expect(await supports('0x620ee8e4')).toBe(false);
    expect(await supports('0xe3bc4e65')).toBe(true);
  });

  it('without a cooldown the vault is synchronous ERC-4626: redeem pays at once, requestRedeem is refused', async () => {
    const setup = await deployAsyncVault(chain, 0);
    const shares = await deposit(setup, 'payer', USDE('100'));
    expect(await readVault<bigint>(setup, 'maxRedeem', [A])).toBe(shares);
    await expectRevert(
      chain,
      'payer',
      { address: setup.vault, abi: YieldVault.abi, functionName: 'requestRedeem', args: [shares, A, A] },
      'RedemptionIsSynchronous',
    );
    const previewed = await readVault<bigint>(setup, 'previewRedeem', [shares]);
    expect(await claimShares(setup, 'payer', shares)).toBe(previewed);
    expect(USDE('100') - previewed).toBeLessThanOrEqual(1n);
  });
});

describe('asynchronous redemption while sUSDe has a cooldown', () => {
  it('two holders request at different times and each claims at its own cooldown end exactly the assets previewed; a third request in between changes neither', async () => {
    const setup = await deployAsyncVault(chain);
    const sharesA = await deposit(setup, 'payer', USDE('100'));
    const sharesB = await deposit(setup, 'attacker', USDE('50'));
    const sharesC = await deposit(setup, 'operator', USDE('30'));
    await addYield(setup, USDE('9.123456789012345678'));
    // Deposits are open while the cooldown is on (the vault can pay them back asynchronously).
    expect(await readVault<bigint>(setup, 'maxDeposit', [A])).toBeGreaterThan(0n);
    // ERC-7540: the synchronous previews revert while redemption is asynchronous.
    await expect(readVault(setup, 'previewRedeem', [sharesA])).rejects.toThrow(/RedemptionIsAsynchronous/);
    await expect(readVault(setup, 'previewWithdraw', [1n])).rejects.toThrow(/RedemptionIsAsynchronous/);

    const assetsA = await readVault<bigint>(setup, 'convertToAssets', [sharesA]);
    const a = await requestRedeem(setup, 'payer', sharesA);
    expect(await readVault<bigint>(setup, 'balanceOf', [A])).toBe(0n);
    expect(await readVault<bigint>(setup, 'pendingRedeemRequest', [a.requestId, A])).toBe(sharesA);
    expect(await readVault<bigint>(setup, 'claimableRedeemRequest', [a.requestId, A])).toBe(0n);
    expect(await readVault<bigint>(setup, 'pendingRedeemRequest', [a.requestId, B])).toBe(0n);
    expect(await readVault<bigint>(setup, 'maxRedeem', [A])).toBe(0n);
    expect(await readVault<bigint>(setup, 'maxWithdraw', [A])).toBe(0n);
    const stateA = await requestState(setup, a.requestId);
    expect(stateA).toEqual({
      controller: A,
      shares: sharesA,
      assets: assetsA,
      claimableAt: a.at + BigInt(SEVEN_DAYS),
    });

    await travel(chain, 3 * DAY);
    const halfC = sharesC / 2n;
    const c = await requestRedeem(setup, 'operator', halfC);
    expect(await requestState(setup, a.requestId)).toEqual(stateA);

    await travel(chain, DAY);
    const assetsB = await readVault<bigint>(setup, 'convertToAssets', [sharesB]);
    const b = await requestRedeem(setup, 'attacker', sharesB);
    const stateB = await requestState(setup, b.requestId);
    expect(stateB.assets).toBe(assetsB);
    expect(stateB.claimableAt).toBe(b.at + BigInt(SEVEN_DAYS));
    // The rate rises after the requests: requested assets are fixed, the remaining holder's shares gain.
    await addYield(setup, USDE('5'));
    expect(await requestState(setup, a.requestId)).toEqual(stateA);
    expect(await requestState(setup, b.requestId)).toEqual(stateB);

    // An hour before A's end nothing is claimable; claiming is refused as exceeding the max.
    await travelTo(chain, stateA.claimableAt - 3600n);
    await expectRevert(
      chain,
      'payer',
      { address: setup.vault, abi: YieldVault.abi, functionName: 'redeem', args: [sharesA, A, A] },
      'ERC4626ExceededMaxRedeem',
      [A, sharesA, 0n],
    );

    await travelTo(chain, stateA.claimableAt);
    expect(await readVault<bigint>(setup, 'claimableRedeemRequest', [a.requestId, A])).toBe(sharesA);
    expect(await readVault<bigint>(setup, 'pendingRedeemRequest', [a.requestId, A])).toBe(0n);
    expect(await readVault<bigint>(setup, 'maxWithdraw', [A])).toBe(assetsA);
    expect(await readVault<bigint>(setup, 'claimableRedeemRequest', [b.requestId, B])).toBe(0n);
    expect(await claimShares(setup, 'payer', sharesA)).toBe(assetsA);
    expect(await readVault<bigint[]>(setup, 'openRedeemRequests', [A])).toEqual([]);
    // B is still cooling down.
    await expectRevert(
      chain,
      'attacker',
      { address: setup.vault, abi: YieldVault.abi, functionName: 'redeem', args: [sharesB, B, B] },
      'ERC4626ExceededMaxRedeem',
      [B, sharesB, 0n],
    );

    await travelTo(chain, stateB.claimableAt);
    expect(await claimShares(setup, 'attacker', sharesB)).toBe(assetsB);

    // C claims by assets (withdraw) exactly what its request was worth.
    const stateC = await requestState(setup, c.requestId);
    const before = await readVault<bigint>(setup, 'maxWithdraw', [C]);
    expect(before).toBe(stateC.assets);
    await send(chain, 'operator', {
      address: setup.vault,
      abi: YieldVault.abi,
      functionName: 'withdraw',
      args: [stateC.assets, C, C],
    });
    expect(await readVault<bigint>(setup, 'maxRedeem', [C])).toBe(0n);
    expect(await readVault<bigint>(setup, 'balanceOf', [C])).toBe(sharesC - halfC);
  }, 120_000);

  it('deposits after a request keep their yield, and the request keeps exactly its assets', async () => {
    const setup = await deployAsyncVault(chain);
    const sharesA = await deposit(setup, 'payer', USDE('100'));
    const a = await requestRedeem(setup, 'payer', sharesA);
    const stateA = await requestState(setup, a.requestId);
    const sharesB = await deposit(setup, 'attacker', USDE('200'));
    const valueBefore = await readVault<bigint>(setup, 'convertToAssets', [sharesB]);
    // sUSDe holds 1 (owner) + 200 (vault) USDe staked: 20.1 USDe of yield is +10 %.
    await addYield(setup, USDE('20.1'));
    const valueAfter = await readVault<bigint>(setup, 'convertToAssets', [sharesB]);
    expect(valueAfter - (valueBefore * 11n) / 10n).toBeLessThanOrEqual(2n);
    expect(valueAfter).toBeGreaterThan(USDE('219.99'));
    expect(await requestState(setup, a.requestId)).toEqual(stateA);

    await travelTo(chain, stateA.claimableAt);
    expect(await claimShares(setup, 'payer', sharesA)).toBe(stateA.assets);
    expect(USDE('100') - stateA.assets).toBeLessThanOrEqual(1n);
    const b = await requestRedeem(setup, 'attacker', sharesB);
    const stateB = await requestState(setup, b.requestId);
    expect(stateB.assets).toBe(valueAfter);
    await travelTo(chain, stateB.claimableAt);
    expect(await claimShares(setup, 'attacker', sharesB)).toBe(valueAfter);
  }, 120_000);

  it('nobody claims another holder’s request, nor files one in another’s name without being its operator', async () => {
    const setup = await deployAsyncVault(chain);
    const sharesA = await deposit(setup, 'payer', USDE('10'));
    await deposit(setup, 'attacker', USDE('10'));
    const a = await requestRedeem(setup, 'payer', sharesA);
    const stateA = await requestState(setup, a.requestId);
    await travelTo(chain, stateA.claimableAt);
    await expectRevert(
      chain,
      'attacker',
      { address: setup.vault, abi: YieldVault.abi, functionName: 'redeem', args: [sharesA, B, A] },
      'NotControllerOrOperator',
      [A, B],
    );
    await expectRevert(
      chain,
      'attacker',
      { address: setup.vault, abi: YieldVault.abi, functionName: 'withdraw', args: [1n, B, A] },
      'NotControllerOrOperator',
      [A, B],
    );
    await expectRevert(
      chain,
      'attacker',
      { address: setup.vault, abi: YieldVault.abi, functionName: 'requestRedeem', args: [1n, A, B] },
      'ControllerNotApproved',
      [A, B],
    );
    // An operator the controller approved claims for it (to the controller).
    await send(chain, 'payer', {
      address: setup.vault,
      abi: YieldVault.abi,
      functionName: 'setOperator',
      args: [C, true],
    });
    expect(await readVault<boolean>(setup, 'isOperator', [A, C])).toBe(true);
    await send(chain, 'operator', {
      address: setup.vault,
      abi: YieldVault.abi,
      functionName: 'redeem',
      args: [sharesA, A, A],
    });
    expect(await readVault<bigint>(setup, 'maxRedeem', [A])).toBe(0n);
  }, 120_000);

  it('a cooldown switched off while a request is open makes it claimable at once; the holder then redeems synchronously again', async () => {
    const setup = await deployAsyncVault(chain);
    const shares = await deposit(setup, 'payer', USDE('100'));
    const half = shares / 2n;
    const a = await requestRedeem(setup, 'payer', half);
    const { assets } = await requestState(setup, a.requestId);
    expect(await readVault<bigint>(setup, 'maxRedeem', [A])).toBe(0n);
    await setCooldown(setup, 0);
    expect(await readVault<bigint>(setup, 'claimableRedeemRequest', [a.requestId, A])).toBe(half);
    // While the request is open, redeem claims it first.
    expect(await readVault<bigint>(setup, 'maxRedeem', [A])).toBe(half);
    expect(await claimShares(setup, 'payer', half)).toBe(assets);
    const rest = shares - half;
    expect(await readVault<bigint>(setup, 'maxRedeem', [A])).toBe(rest);
    const previewed = await readVault<bigint>(setup, 'previewRedeem', [rest]);
    expect(await claimShares(setup, 'payer', rest)).toBe(previewed);
    expect(USDE('100') - assets - previewed).toBeLessThanOrEqual(2n);
  }, 120_000);

  it('partial claims pay in proportion, rounded against the claimant, and the last claim pays the rest exactly', async () => {
    const setup = await deployAsyncVault(chain);
    const shares = await deposit(setup, 'payer', USDE('3.141592653589793238'));
    await addYield(setup, USDE('0.777777777777777777'));
    const a = await requestRedeem(setup, 'payer', shares);
    const { assets, claimableAt } = await requestState(setup, a.requestId);
    await travelTo(chain, claimableAt);
    const third = shares / 3n;
    const first = await claimShares(setup, 'payer', third);
    expect(first).toBe((assets * third) / shares);
    const second = await claimShares(setup, 'payer', shares - third);
    expect(first + second).toBe(assets);
  }, 120_000);
});

describe('ERC-4626 hazards on the asynchronous path', () => {
  /** The vault's virtual shares: 10^6 (its decimals offset). */
  const VIRTUAL_SHARES = 10n ** 6n;

  async function requestAndClaimAll(setup: AsyncVault, actor: 'payer' | 'attacker'): Promise<bigint> {
    const holder = ACCOUNTS[actor].address;
    const shares = await readVault<bigint>(setup, 'balanceOf', [holder]);
    const { requestId } = await requestRedeem(setup, actor, shares);
    const { claimableAt } = await requestState(setup, requestId);
    await travelTo(chain, claimableAt);
    return claimShares(setup, actor, shares);
  }

  it('inflation attack: a first depositor who donates sUSDe cannot take a later deposit', async () => {
    const setup = await deployAsyncVault(chain);
    await deposit(setup, 'attacker', 1n);
    await send(chain, 'attacker', {
      address: chain.contracts.usde,
      abi: TestStablecoin.abi,
      functionName: 'mint',
      args: [B, USDE('10000')],
    });
    await send(chain, 'attacker', {
      address: chain.contracts.usde,
      abi: TestStablecoin.abi,
      functionName: 'approve',
      args: [setup.susde, USDE('10000')],
    });
    await send(chain, 'attacker', {
      address: setup.susde,
      abi: LocalStakedUSDeV2.abi,
      functionName: 'deposit',
      args: [USDE('10000'), setup.vault],
    });
    expect(await deposit(setup, 'payer', USDE('100'))).toBeGreaterThan(0n);
    const victimBack = await requestAndClaimAll(setup, 'payer');
    expect(USDE('100') - victimBack).toBeLessThanOrEqual(USDE('10000') / VIRTUAL_SHARES + 2n);
    const attackerBack = await requestAndClaimAll(setup, 'attacker');
    expect(attackerBack).toBeLessThan(((USDE('10000') + 1n) * 51n) / 100n);
  }, 120_000);

  it('rounding: a deposit requested and claimed at an uneven rate never returns more than was deposited, and a request worth nothing is refused', async () => {
    const setup = await deployAsyncVault(chain);
    await deposit(setup, 'attacker', USDE('1000'));
    await addYield(setup, USDE('7.777777777777777777'));
    const odd = USDE('3.141592653589793238');
    await deposit(setup, 'payer', odd);
    expect(await requestAndClaimAll(setup, 'payer')).toBeLessThanOrEqual(odd);
    // One share (of 10^6 per USDe wei) is worth no whole wei.
    await expectRevert(
      chain,
      'attacker',
      { address: setup.vault, abi: YieldVault.abi, functionName: 'requestRedeem', args: [1n, B, B] },
      'RequestWorthNothing',
      [1n],
    );
  }, 120_000);

  it('re-entrancy: a token hook that re-enters requestRedeem or a claim mid-deposit reverts the whole deposit', async () => {
    const deploy = async (abi: never, bytecode: `0x${string}`, args: unknown[] = []): Promise<Address> => {
      const wallet = chain.wallet('owner');
      const hash = await wallet.deployContract({
        abi,
        bytecode,
        args,
        account: wallet.account,
        chain: wallet.chain,
      });
      return (await chain.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
    };
    const token = await deploy(TransferHookToken.abi as never, TransferHookToken.bytecode);
    const stakedHook = await deploy(LocalStakedUSDeV2.abi as never, LocalStakedUSDeV2.bytecode, [token, A]);
    const vault = await deploy(YieldVault.abi as never, YieldVault.bytecode, [stakedHook, 'Hooked', 'hUSD']);
    await send(chain, 'payer', {
      address: token,
      abi: TransferHookToken.abi,
      functionName: 'mint',
      args: [A, USDE('10')],
    });
    await send(chain, 'payer', {
      address: token,
      abi: TransferHookToken.abi,
      functionName: 'approve',
      args: [vault, USDE('10')],
    });
    for (const data of [
      encodeFunctionData({ abi: YieldVault.abi, functionName: 'requestRedeem', args: [1n, A, A] }),
      encodeFunctionData({ abi: YieldVault.abi, functionName: 'redeem', args: [1n, A, A] }),
    ]) {
      await send(chain, 'payer', {
        address: token,
        abi: TransferHookToken.abi,
        functionName: 'arm',
        args: [vault, data],
      });
      await expectRevert(
        chain,
        'payer',
        { address: vault, abi: YieldVault.abi, functionName: 'deposit', args: [USDE('1'), A] },
        'ReentrancyGuardReentrantCall',
      );
    }
    expect(await readVault(setupOf(vault, stakedHook), 'totalSupply')).toBe(0n);
    expect(await balanceOf(chain, token, A)).toBe(USDE('10'));
  }, 120_000);
});

const setupOf = (vault: Address, susde: Address): AsyncVault => ({ chain, vault, susde });
