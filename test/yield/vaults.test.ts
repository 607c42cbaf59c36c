import { type Address, encodeFunctionData, parseEventLogs, parseUnits } from 'viem';
import {
  LocalStakedUSDe,
  TestStablecoin,
  TransferHookToken,
  YieldVault,
  YieldVaultFactory,
} from '../../contracts/artifacts';
import { vaultSetIdOf } from '../../chain/yieldVaultFactory';
import {
  ACCOUNTS,
  type Actor,
  SETTLEMENT_CHAIN,
  type SettlementChain,
  type SettlementChains,
  balanceOf,
  expectRevert,
  send,
  startSettlementChains,
} from '../chain/settlementFixture';

/**
 * The branded yield vaults on anvil: one factory transaction deploys a set; deposits earn exactly the sUSDe
 * rate; and the ERC-4626 hazards (inflation by donation, rounding in the caller's favour, re-entrancy through
 * a token hook) are each attempted and fail.
 */

const USDE = (amount: string): bigint => parseUnits(amount, 18);
/** The vault's virtual shares: 10^6 (its decimals offset). */
const VIRTUAL_SHARES = 10n ** 6n;

let chains: SettlementChains;
let chain: SettlementChain;

beforeAll(async () => {
  chains = await startSettlementChains([SETTLEMENT_CHAIN]);
  chain = chains.chain(SETTLEMENT_CHAIN);
}, 240_000);

afterAll(async () => {
  await chains?.stop();
});

const read = <T>(address: Address, functionName: string, args: unknown[] = []): Promise<T> =>
  chain.publicClient.readContract({
    address,
    abi: YieldVault.abi,
    functionName,
    args,
  } as never) as Promise<T>;

async function deployVaultSet(setLabel: string, names: [string, string][], actor: Actor = 'operator') {
  const setId = vaultSetIdOf(crypto.randomUUID());
  const receipt = await send(chain, actor, {
    address: chain.contracts.yieldVaultFactory,
    abi: YieldVaultFactory.abi,
    functionName: 'deployVaultSet',
    args: [
      setId,
      names.map(([name, symbol]) => ({
        stakedVault: chain.contracts.susde,
        name: `${setLabel} ${name}`,
        symbol,
      })),
    ],
  });
  const [event] = parseEventLogs({
    abi: YieldVaultFactory.abi,
    logs: receipt.logs,
    eventName: 'VaultSetDeployed',
  });
  return { setId, receipt, vaults: event!.args.vaults };
}

async function mintUsde(actor: Actor, amount: bigint): Promise<void> {
  await send(chain, actor, {
    address: chain.contracts.usde,
    abi: TestStablecoin.abi,
    functionName: 'mint',
    args: [ACCOUNTS[actor].address, amount],
  });
}

async function depositToVault(actor: Actor, vault: Address, assets: bigint): Promise<bigint> {
  await mintUsde(actor, assets);
  await send(chain, actor, {
    address: chain.contracts.usde,
    abi: TestStablecoin.abi,
    functionName: 'approve',
    args: [vault, assets],
  });
  const before = await read<bigint>(vault, 'balanceOf', [ACCOUNTS[actor].address]);
  await send(chain, actor, {
    address: vault,
    abi: YieldVault.abi,
    functionName: 'deposit',
    args: [assets, ACCOUNTS[actor].address],
  });
  return (await read<bigint>(vault, 'balanceOf', [ACCOUNTS[actor].address])) - before;
}

/** Raises the sUSDe rate as yield does: USDe sent to the sUSDe vault without shares. */
async function addSusdeYield(amount: bigint): Promise<void> {
  await mintUsde('owner', amount);
  await send(chain, 'owner', {
    address: chain.contracts.usde,
    abi: TestStablecoin.abi,
    functionName: 'transfer',
    args: [chain.contracts.susde, amount],
  });
}

/** sUSDe's own conversion (OpenZeppelin ERC-4626, no offset), computed here from its state. */
async function susdeAssetsOf(shares: bigint): Promise<bigint> {
  const [totalAssets, totalSupply] = await Promise.all([
    chain.publicClient.readContract({
      address: chain.contracts.susde,
      abi: LocalStakedUSDe.abi,
      functionName: 'totalAssets',
    }),
    chain.publicClient.readContract({
      address: chain.contracts.susde,
      abi: LocalStakedUSDe.abi,
      functionName: 'totalSupply',
    }),
  ]);
  return (shares * (totalAssets + 1n)) / (totalSupply + 1n);
}

async function redeemAll(actor: Actor, vault: Address): Promise<bigint> {
  const holder = ACCOUNTS[actor].address;
  const shares = await read<bigint>(vault, 'balanceOf', [holder]);
  const before = await balanceOf(chain, chain.contracts.usde, holder);
  await send(chain, actor, {
    address: vault,
    abi: YieldVault.abi,
    functionName: 'redeem',
    args: [shares, holder, holder],
  });
  return (await balanceOf(chain, chain.contracts.usde, holder)) - before;
}

describe('the vault factory', () => {
  it('deploys a branded vault per spec in one transaction, each staking in sUSDe', async () => {
    const { setId, vaults } = await deployVaultSet('Acme', [
      ['Yield USDe', 'acUSDe'],
      ['Savings USDe', 'asUSDe'],
    ]);
    expect(vaults).toHaveLength(2);
    for (const vault of vaults)
      expect(await chain.publicClient.getCode({ address: vault })).toMatch(/^0x[0-9a-f]{100,}/);
    expect(await read(vaults[0]!, 'name')).toBe('Acme Yield USDe');
    expect(await read(vaults[0]!, 'symbol')).toBe('acUSDe');
    expect(await read(vaults[1]!, 'symbol')).toBe('asUSDe');
    expect(await read(vaults[0]!, 'asset')).toBe(chain.contracts.usde);
    expect(await read(vaults[0]!, 'stakedVault')).toBe(chain.contracts.susde);
    expect(await read(vaults[0]!, 'decimals')).toBe(24);
    const recorded = await chain.publicClient.readContract({
      address: chain.contracts.yieldVaultFactory,
      abi: YieldVaultFactory.abi,
      functionName: 'vaultSetOf',
      args: [ACCOUNTS.operator.address, setId],
    });
    expect(recorded).toEqual(vaults);
  });

  it('refuses a set id the caller already deployed, so a retried transaction never makes a second set', async () => {
    const { setId } = await deployVaultSet('Once', [['Yield USDe', 'oUSDe']]);
    await expectRevert(
      chain,
      'operator',
      {
        address: chain.contracts.yieldVaultFactory,
        abi: YieldVaultFactory.abi,
        functionName: 'deployVaultSet',
        args: [setId, [{ stakedVault: chain.contracts.susde, name: 'Once again', symbol: 'oUSDe' }]],
      },
      'VaultSetAlreadyDeployed',
      [ACCOUNTS.operator.address, setId],
    );
  });

  it('refuses an empty set', async () => {
    await expectRevert(
      chain,
      'operator',
      {
        address: chain.contracts.yieldVaultFactory,
        abi: YieldVaultFactory.abi,
        functionName: 'deployVaultSet',
        args: [vaultSetIdOf(crypto.randomUUID()), []],
      },
      'EmptyVaultSet',
    );
  });
});

describe('a deposit earns the sUSDe rate', () => {
  it('100 USDe deposited: convertToAssets rises exactly with the sUSDe rate, and redeeming pays it out', async () => {
    const { vaults } = await deployVaultSet('Rate', [['Yield USDe', 'rUSDe']]);
    const vault = vaults[0]!;
    const shares = await depositToVault('payer', vault, USDE('100'));
    expect(shares).toBe(USDE('100') * VIRTUAL_SHARES);
    const stakedShares = await balanceOf(chain, chain.contracts.susde, vault);
    expect(await read(vault, 'totalAssets')).toBe(await susdeAssetsOf(stakedShares));

    // Raise the sUSDe rate by 5 % of its assets.
    const susdeAssets = await chain.publicClient.readContract({
      address: chain.contracts.susde,
      abi: LocalStakedUSDe.abi,
      functionName: 'totalAssets',
    });
    await addSusdeYield(susdeAssets / 20n);

    const vaultAssets = await susdeAssetsOf(stakedShares);
    expect(vaultAssets).toBeGreaterThan(USDE('104.99'));
    expect(await read(vault, 'totalAssets')).toBe(vaultAssets);
    const supply = await read<bigint>(vault, 'totalSupply');
    const expected = (shares * (vaultAssets + 1n)) / (supply + VIRTUAL_SHARES);
    expect(await read(vault, 'convertToAssets', [shares])).toBe(expected);
    expect(await read(vault, 'maxWithdraw', [ACCOUNTS.payer.address])).toBe(expected);

    const received = await redeemAll('payer', vault);
    expect(received).toBe(expected);
    expect(await read(vault, 'balanceOf', [ACCOUNTS.payer.address])).toBe(0n);
  });

  it('withdraw pays the asked assets and burns the shares they are worth, rounded against the caller', async () => {
    const { vaults } = await deployVaultSet('Withdraw', [['Yield USDe', 'wUSDe']]);
    const vault = vaults[0]!;
    await depositToVault('payer', vault, USDE('100'));
    await addSusdeYield(USDE('3.333333333333333333'));
    const holder = ACCOUNTS.payer.address;
    const assets = USDE('40');
    const sharesBefore = await read<bigint>(vault, 'balanceOf', [holder]);
    const expectedBurn = await read<bigint>(vault, 'previewWithdraw', [assets]);
    const before = await balanceOf(chain, chain.contracts.usde, holder);
    await send(chain, 'payer', {
      address: vault,
      abi: YieldVault.abi,
      functionName: 'withdraw',
      args: [assets, holder, holder],
    });
    expect((await balanceOf(chain, chain.contracts.usde, holder)) - before).toBe(assets);
    const burnt = sharesBefore - (await read<bigint>(vault, 'balanceOf', [holder]));
    expect(burnt).toBe(expectedBurn);
    // The burnt shares are worth at least what left the vault.
    expect(await read<bigint>(vault, 'previewRedeem', [burnt])).toBeGreaterThanOrEqual(assets);
  });
});

describe('ERC-4626 hazards', () => {
  it('inflation attack: a first depositor who donates sUSDe cannot take a later deposit', async () => {
    const { vaults } = await deployVaultSet('Inflation', [['Yield USDe', 'iUSDe']]);
    const vault = vaults[0]!;
    const attacker = ACCOUNTS.attacker.address;
    const attackerSpent = USDE('10000') + 1n;
    await depositToVault('attacker', vault, 1n);
    // Donate 10,000 USDe worth of sUSDe straight to the vault (no shares minted for it).
    await mintUsde('attacker', USDE('10000'));
    await send(chain, 'attacker', {
      address: chain.contracts.usde,
      abi: TestStablecoin.abi,
      functionName: 'approve',
      args: [chain.contracts.susde, USDE('10000')],
    });
    await send(chain, 'attacker', {
      address: chain.contracts.susde,
      abi: LocalStakedUSDe.abi,
      functionName: 'deposit',
      args: [USDE('10000'), vault],
    });

    const victimShares = await depositToVault('payer', vault, USDE('100'));
    expect(victimShares).toBeGreaterThan(0n);
    const victimBack = await redeemAll('payer', vault);
    // The offset leaves the victim at most a millionth of the donation short...
    expect(USDE('100') - victimBack).toBeLessThanOrEqual(USDE('10000') / VIRTUAL_SHARES + 2n);
    // ...and the attacker loses about half of the donation to the virtual shares: the attack costs, never pays.
    const attackerBack = await redeemAll('attacker', vault);
    expect(attackerBack).toBeLessThan((attackerSpent * 51n) / 100n);
    expect(await read(vault, 'balanceOf', [attacker])).toBe(0n);
  });

  it('rounding: previews and round trips never favour the caller at an uneven rate', async () => {
    const { vaults } = await deployVaultSet('Rounding', [['Yield USDe', 'roUSDe']]);
    const vault = vaults[0]!;
    await depositToVault('owner', vault, USDE('1000'));
    await addSusdeYield(USDE('7.777777777777777777'));
    for (const assets of [1n, 7n, 999_999n, USDE('1') + 3n, USDE('12.345678901234567891')]) {
      const shares = await read<bigint>(vault, 'previewDeposit', [assets]);
      // Depositing then redeeming never returns more than was deposited.
      expect(await read<bigint>(vault, 'previewRedeem', [shares])).toBeLessThanOrEqual(assets);
      // Minting those shares costs at least what depositing gave them for (mint rounds up).
      expect(await read<bigint>(vault, 'previewMint', [shares])).toBeLessThanOrEqual(assets);
      expect(await read<bigint>(vault, 'previewMint', [shares + 1n])).toBeGreaterThan(
        await read<bigint>(vault, 'convertToAssets', [shares]),
      );
      // Withdrawing the assets burns at least the shares a deposit of them would mint.
      expect(await read<bigint>(vault, 'previewWithdraw', [assets])).toBeGreaterThanOrEqual(shares);
    }
    // On chain: a deposit followed at once by a full redeem returns at most the deposit.
    const odd = USDE('3.141592653589793238');
    await depositToVault('payer', vault, odd);
    expect(await redeemAll('payer', vault)).toBeLessThanOrEqual(odd);
  });

  it('re-entrancy: a token hook that re-enters deposit mid-transfer reverts the whole deposit', async () => {
    const deploy = async (abi: never, bytecode: `0x${string}`, args: unknown[] = []): Promise<Address> => {
      const wallet = chain.wallet('owner');
      const hash = await wallet.deployContract({
        abi,
        bytecode,
        args,
        account: wallet.account,
        chain: wallet.chain,
      });
      const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
      return receipt.contractAddress!;
    };
    const token = await deploy(TransferHookToken.abi as never, TransferHookToken.bytecode);
    const stakedHook = await deploy(LocalStakedUSDe.abi as never, LocalStakedUSDe.bytecode, [token]);
    const vault = await deploy(YieldVault.abi as never, YieldVault.bytecode, [stakedHook, 'Hooked', 'hUSD']);
    const payer = ACCOUNTS.payer.address;
    await send(chain, 'payer', {
      address: token,
      abi: TransferHookToken.abi,
      functionName: 'mint',
      args: [payer, USDE('10')],
    });
    await send(chain, 'payer', {
      address: token,
      abi: TransferHookToken.abi,
      functionName: 'approve',
      args: [vault, USDE('10')],
    });
    await send(chain, 'payer', {
      address: token,
      abi: TransferHookToken.abi,
      functionName: 'arm',
      args: [vault, encodeFunctionData({ abi: YieldVault.abi, functionName: 'deposit', args: [1n, payer] })],
    });
    await expectRevert(
      chain,
      'payer',
      { address: vault, abi: YieldVault.abi, functionName: 'deposit', args: [USDE('1'), payer] },
      'ReentrancyGuardReentrantCall',
    );
    expect(await read(vault, 'totalSupply')).toBe(0n);
    expect(await balanceOf(chain, token, payer)).toBe(USDE('10'));
  });
});
