import { parseEventLogs, parseUnits, type Address } from 'viem';
import { LocalStakedUSDeV2, TestStablecoin, YieldVault, YieldVaultFactory } from '../../contracts/artifacts';
import { vaultSetIdOf } from '../../chain/yieldVaultFactory';
import { ACCOUNTS, type SettlementChain, balanceOf, expectRevert, send } from '../chain/settlementFixture';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { deployCooldownSusde } from './cooldownDeployment';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * Ethena's sUSDe refuses ERC-4626 withdrawals while its cooldown is on. Security review II (finding 5) refused
 * such chains; issue 32 gives the vault ERC-7540 asynchronous redemption instead, so the chain is offered and
 * deployed with the cooldown on, and a deployed vault takes deposits and pays them back after a request and the
 * cooldown. The yield chain here is private, its sUSDe a LocalStakedUSDeV2 (Ethena's behaviour) whose cooldown
 * the test switches.
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
      susde = await deployCooldownSusde(own, 0);
      return { susde };
    },
  });
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

describe('sUSDe with its cooldown on: asynchronous redemption (issue 32, was finding 5)', () => {
  afterEach(() => setCooldown(0));

  it('while sUSDe’s cooldown is on a vault takes deposits, reports nothing withdrawable before a request (maxWithdraw and maxRedeem 0, a withdrawal refused as exceeding it), and pays a request in full after the cooldown', async () => {
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
    await setCooldown(SEVEN_DAYS);
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
    expect(shares).toBeGreaterThan(0n);
    expect(await readVault<bigint>(vault, 'maxWithdraw', [holder])).toBe(0n);
    expect(await readVault<bigint>(vault, 'maxRedeem', [holder])).toBe(0n);
    await expectRevert(
      chain,
      'payer',
      { address: vault, abi: YieldVault.abi, functionName: 'withdraw', args: [USDE('1'), holder, holder] },
      'ERC4626ExceededMaxWithdraw',
      [holder, USDE('1'), 0n],
    );

    const requested = await send(chain, 'payer', {
      address: vault,
      abi: YieldVault.abi,
      functionName: 'requestRedeem',
      args: [shares, holder, holder],
    });
    const [request] = parseEventLogs({
      abi: YieldVault.abi,
      logs: requested.logs,
      eventName: 'RedeemRequest',
    });
    const [, , owed, claimableAt] = await readVault<[Address, bigint, bigint, bigint]>(
      vault,
      'redeemRequest',
      [request!.args.requestId],
    );
    expect(assets - owed).toBeLessThanOrEqual(1n);
    await chain.publicClient.request({
      method: 'evm_setNextBlockTimestamp',
      params: [`0x${claimableAt.toString(16)}`],
    } as never);
    await chain.publicClient.request({ method: 'evm_mine', params: [] } as never);
    expect(await readVault<bigint>(vault, 'maxRedeem', [holder])).toBe(shares);
    const before = await balanceOf(chain, chain.contracts.usde, holder);
    await send(chain, 'payer', {
      address: vault,
      abi: YieldVault.abi,
      functionName: 'redeem',
      args: [shares, holder, holder],
    });
    expect((await balanceOf(chain, chain.contracts.usde, holder)) - before).toBe(owed);
  }, 120_000);

  it('deploy-options offers the chain while its sUSDe cooldown is on', async () => {
    await setCooldown(SEVEN_DAYS);
    const offered = await call('GET', `/deploy-options?chainId=${YIELD_CHAIN}`);
    expect(offered.status).toBe(200);
    expect(offered.body.permittedTokens).toEqual([expect.objectContaining({ symbol: 'USDe' })]);
  });

  it('a deploy while the cooldown is on is queued and ends active (its vaults deployed)', async () => {
    const draft = await createDraft();
    await setCooldown(SEVEN_DAYS);
    expect((await call('POST', `/${draft.id}/deploy`)).status).toBe(202);
    const done = await waitFor(
      async () => (await call('GET', `/${draft.id}`)).body,
      (body) => body.status !== 'deploying',
    );
    expect(done).toMatchObject({ status: 'active', failureReason: null });
  }, 120_000);
});
