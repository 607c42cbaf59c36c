import { parseEventLogs, parseUnits, type Address } from 'viem';
import { LocalStakedUSDeV2, TestStablecoin, YieldVault, YieldVaultFactory } from '../../contracts/artifacts';
import { vaultSetIdOf } from '../../chain/yieldVaultFactory';
import { ACCOUNTS, type SettlementChain, expectRevert, send } from '../chain/settlementFixture';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * Security review II, finding 5: Ethena's sUSDe refuses ERC-4626 withdrawals while its cooldown is on, so a
 * vault over it would take deposits it cannot pay back. The chain is not offered, a deploy is refused, and a
 * vault already out reports nothing withdrawable while the cooldown lasts. The yield chain here is private,
 * its sUSDe a LocalStakedUSDeV2 (Ethena's behaviour) whose cooldown the test switches.
 */
const BASE = '/v1/merchants/me/yield-deployments';
const SEVEN_DAYS = 7 * 24 * 3600;
const USDE = (amount: string) => parseUnits(amount, 18);

let world: YieldWorld;
let chain: SettlementChain;
let susde: Address;
let merchant: SignedInMerchant;

beforeAll(async () => {
  world = await startYieldWorld({
    privateChain: true,
    async prepareChain(own) {
      chain = own;
      const wallet = own.wallet('owner');
      const hash = await wallet.deployContract({
        abi: LocalStakedUSDeV2.abi,
        bytecode: LocalStakedUSDeV2.bytecode,
        args: [own.contracts.usde, ACCOUNTS.owner.address],
      });
      susde = (await own.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
      return { susde };
    },
  });
  await setCooldown(0);
  merchant = await signInNewMerchant(world.app);
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

async function setCooldown(seconds: number) {
  await send(chain, 'owner', {
    address: susde,
    abi: LocalStakedUSDeV2.abi,
    functionName: 'setCooldownDuration',
    args: [seconds],
  });
}

const call = (method: string, path: string, json?: unknown) =>
  world.app.request(`${BASE}${path}`, {
    method,
    headers: merchant.auth,
    ...(json !== undefined && { json }),
  });

const readVault = <T>(vault: Address, functionName: string, args: unknown[] = []) =>
  chain.publicClient.readContract({
    address: vault,
    abi: YieldVault.abi,
    functionName,
    args,
  } as never) as Promise<T>;

async function createDraft() {
  const created = await call('POST', '', { name: 'Cooldown Savings', chainId: YIELD_CHAIN });
  expect(created.status).toBe(201);
  return created.body as { id: string };
}

describe('finding 5 — vault deposits lock if sUSDe turns its cooldown on', () => {
  afterEach(() => setCooldown(0));

  it('finding 5 — while sUSDe’s cooldown is on a vault reports nothing withdrawable (maxWithdraw and maxRedeem 0), refuses a withdrawal as exceeding it and takes no new deposit; once off, the holder redeems in full', async () => {
    const receipt = await send(chain, 'operator', {
      address: chain.contracts.yieldVaultFactory,
      abi: YieldVaultFactory.abi,
      functionName: 'deployVaultSet',
      args: [
        vaultSetIdOf(crypto.randomUUID()),
        [{ stakedVault: susde, name: 'Cooldown USDe Vault', symbol: 'COOLUSDe' }],
      ],
    });
    const [deployed] = parseEventLogs({
      abi: YieldVaultFactory.abi,
      logs: receipt.logs,
      eventName: 'VaultSetDeployed',
    });
    const vault = deployed!.args.vaults[0]!;
    const holder = ACCOUNTS.payer.address;
    const assets = USDE('100');
    await send(chain, 'payer', {
      address: chain.contracts.usde,
      abi: TestStablecoin.abi,
      functionName: 'mint',
      args: [holder, assets],
    });
    await send(chain, 'payer', {
      address: chain.contracts.usde,
      abi: TestStablecoin.abi,
      functionName: 'approve',
      args: [vault, assets],
    });
    await send(chain, 'payer', {
      address: vault,
      abi: YieldVault.abi,
      functionName: 'deposit',
      args: [assets, holder],
    });
    const shares = await readVault<bigint>(vault, 'balanceOf', [holder]);
    expect(await readVault<bigint>(vault, 'maxWithdraw', [holder])).toBeGreaterThan(USDE('99'));

    await setCooldown(SEVEN_DAYS);
    expect(await readVault<bigint>(vault, 'maxWithdraw', [holder])).toBe(0n);
    expect(await readVault<bigint>(vault, 'maxRedeem', [holder])).toBe(0n);
    // No new money goes in that could not come back out.
    expect(await readVault<bigint>(vault, 'maxDeposit', [holder])).toBe(0n);
    expect(await readVault<bigint>(vault, 'maxMint', [holder])).toBe(0n);
    await expectRevert(
      chain,
      'payer',
      { address: vault, abi: YieldVault.abi, functionName: 'deposit', args: [1n, holder] },
      'ERC4626ExceededMaxDeposit',
      [holder, 1n, 0n],
    );
    await expectRevert(
      chain,
      'payer',
      { address: vault, abi: YieldVault.abi, functionName: 'withdraw', args: [USDE('1'), holder, holder] },
      'ERC4626ExceededMaxWithdraw',
      [holder, USDE('1'), 0n],
    );
    await expectRevert(
      chain,
      'payer',
      { address: vault, abi: YieldVault.abi, functionName: 'redeem', args: [shares, holder, holder] },
      'ERC4626ExceededMaxRedeem',
      [holder, shares, 0n],
    );

    await setCooldown(0);
    expect(await readVault<bigint>(vault, 'maxRedeem', [holder])).toBe(shares);
    const before = await chain.publicClient.readContract({
      address: chain.contracts.usde,
      abi: TestStablecoin.abi,
      functionName: 'balanceOf',
      args: [holder],
    });
    await send(chain, 'payer', {
      address: vault,
      abi: YieldVault.abi,
      functionName: 'redeem',
      args: [shares, holder, holder],
    });
    const after = await chain.publicClient.readContract({
      address: chain.contracts.usde,
      abi: TestStablecoin.abi,
      functionName: 'balanceOf',
      args: [holder],
    });
    expect(assets - (after - before)).toBeLessThanOrEqual(1n);
  }, 120_000);

  it('finding 5 — deploy-options does not offer a chain while its sUSDe cooldown is on (409 naming the cooldown), and offers it again once it is off', async () => {
    expect((await call('GET', `/deploy-options?chainId=${YIELD_CHAIN}`)).body.permittedTokens).toEqual([
      expect.objectContaining({ symbol: 'USDe' }),
    ]);
    await setCooldown(SEVEN_DAYS);
    const refused = await call('GET', `/deploy-options?chainId=${YIELD_CHAIN}`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe(
      `Yield vaults are not offered on chain ${YIELD_CHAIN} while a withdrawal cooldown is on: USDe (sUSDe cooldownDuration ${SEVEN_DAYS} s)`,
    );
    await setCooldown(0);
    expect((await call('GET', `/deploy-options?chainId=${YIELD_CHAIN}`)).status).toBe(200);
  });

  it('finding 5 — a deploy is refused with 409 while the cooldown is on, and the draft stays a draft', async () => {
    const draft = await createDraft();
    await setCooldown(SEVEN_DAYS);
    const refused = await call('POST', `/${draft.id}/deploy`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(
      /withdrawal cooldown is on: USDe \(sUSDe cooldownDuration 604800 s\)/,
    );
    expect((await call('GET', `/${draft.id}`)).body).toMatchObject({ status: 'draft', failureReason: null });
  });

  it('finding 5 — a deploy queued before the cooldown came on ends failed with the reason recorded, and sends no transaction', async () => {
    const draft = await createDraft();
    const nonceBefore = await chain.publicClient.getTransactionCount({ address: world.deployerAddress });
    await world.stopWorkers();
    try {
      expect((await call('POST', `/${draft.id}/deploy`)).status).toBe(202);
      await setCooldown(SEVEN_DAYS);
    } finally {
      await world.startWorkers();
    }
    const failed = await waitFor(
      async () => (await call('GET', `/${draft.id}`)).body,
      (body) => body.status !== 'deploying',
    );
    expect(failed).toMatchObject({
      status: 'failed',
      failureReason:
        'refused before sending: USDe (sUSDe cooldownDuration 604800 s) has a withdrawal cooldown on',
      contracts: null,
    });
    expect(await chain.publicClient.getTransactionCount({ address: world.deployerAddress })).toBe(
      nonceBefore,
    );
  });
});
