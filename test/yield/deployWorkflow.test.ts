import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createWalletClient, defineChain, http, parseEther, parseUnits, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { LocalStakedUSDe, TestStablecoin, YieldVault, YieldVaultFactory } from '../../contracts/artifacts';
import { vaultSetIdOf } from '../../chain/yieldVaultFactory';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * The deploy workflow end to end on a chain of its own: a deployment made through the API holds vaults
 * whose deposits earn exactly the sUSDe rate; and a worker SIGKILLed after the deploy transaction was sent
 * leaves exactly one contract set once another worker finishes the job.
 */

const BASE = '/v1/merchants/me/yield-deployments';
const VIRTUAL_SHARES = 10n ** 6n;
let world: YieldWorld;
let merchant: SignedInMerchant;

beforeAll(async () => {
  world = await startYieldWorld({ privateChain: true });
  merchant = await signInNewMerchant(world.app);
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

const call = (method: string, path: string, json?: unknown) =>
  world.app.request(`${BASE}${path}`, {
    method,
    headers: merchant.auth,
    ...(json !== undefined && { json }),
  });

async function createAndDeploy(name: string) {
  const draft = (await call('POST', '', { name, chainId: YIELD_CHAIN })).body;
  expect((await call('POST', `/${draft.id}/deploy`)).status).toBe(202);
  return draft.id as string;
}

const statusOf = async (id: string) => (await call('GET', `/${id}`)).body;

it('create → deploy → active; 100 USDe deposited earns exactly the raised sUSDe rate and withdraws in full', async () => {
  const id = await createAndDeploy('Rate Check');
  const active = await waitFor(
    () => statusOf(id),
    (body) => body.status !== 'deploying',
  );
  expect(active.status).toBe('active');
  const vault = active.contracts.vaults[0].address as Address;
  const usde = active.contracts.vaults[0].asset as Address;
  const client = world.publicClient(YIELD_CHAIN);
  expect((await client.getCode({ address: vault }))?.length).toBeGreaterThan(100);
  const susde = (await client.readContract({
    address: vault,
    abi: YieldVault.abi,
    functionName: 'stakedVault',
  })) as Address;

  const depositor = privateKeyToAccount(generatePrivateKey());
  await client.request({
    method: 'anvil_setBalance' as never,
    params: [depositor.address, `0x${parseEther('1').toString(16)}`] as never,
  });
  const chain = defineChain({
    id: YIELD_CHAIN,
    name: 'yield',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [world.rpcUrl(YIELD_CHAIN)] } },
  });
  const wallet = createWalletClient({
    account: depositor,
    chain,
    transport: http(world.rpcUrl(YIELD_CHAIN)),
  });
  const send = async (hash: Promise<Hex>) => {
    const receipt = await client.waitForTransactionReceipt({ hash: await hash });
    expect(receipt.status).toBe('success');
  };
  const hundred = parseUnits('100', 18);
  await send(
    wallet.writeContract({
      address: usde,
      abi: TestStablecoin.abi,
      functionName: 'mint',
      args: [depositor.address, hundred * 2n],
    }),
  );
  await send(
    wallet.writeContract({
      address: usde,
      abi: TestStablecoin.abi,
      functionName: 'approve',
      args: [vault, hundred],
    }),
  );
  await send(
    wallet.writeContract({
      address: vault,
      abi: YieldVault.abi,
      functionName: 'deposit',
      args: [hundred, depositor.address],
    }),
  );
  const shares = await client.readContract({
    address: vault,
    abi: YieldVault.abi,
    functionName: 'balanceOf',
    args: [depositor.address],
  });
  expect(shares).toBe(hundred * VIRTUAL_SHARES);

  // Yield arrives at sUSDe: its rate rises by 2 % of its assets.
  const readSusde = (functionName: 'totalAssets' | 'totalSupply') =>
    client.readContract({ address: susde, abi: LocalStakedUSDe.abi, functionName });
  await send(
    wallet.writeContract({
      address: usde,
      abi: TestStablecoin.abi,
      functionName: 'transfer',
      args: [susde, (await readSusde('totalAssets')) / 50n],
    }),
  );
  const stakedShares = await client.readContract({
    address: susde,
    abi: LocalStakedUSDe.abi,
    functionName: 'balanceOf',
    args: [vault],
  });
  const [susdeAssets, susdeSupply] = await Promise.all([readSusde('totalAssets'), readSusde('totalSupply')]);
  const vaultAssets = (stakedShares * (susdeAssets + 1n)) / (susdeSupply + 1n);
  const supply = await client.readContract({
    address: vault,
    abi: YieldVault.abi,
    functionName: 'totalSupply',
  });
  const expected = (shares * (vaultAssets + 1n)) / (supply + VIRTUAL_SHARES);
  const worth = await client.readContract({
    address: vault,
    abi: YieldVault.abi,
    functionName: 'convertToAssets',
    args: [shares],
  });
  expect(worth).toBe(expected);
  expect(worth).toBeGreaterThan(parseUnits('101.99', 18));

  const before = await client.readContract({
    address: usde,
    abi: TestStablecoin.abi,
    functionName: 'balanceOf',
    args: [depositor.address],
  });
  await send(
    wallet.writeContract({
      address: vault,
      abi: YieldVault.abi,
      functionName: 'withdraw',
      args: [worth, depositor.address, depositor.address],
    }),
  );
  const after = await client.readContract({
    address: usde,
    abi: TestStablecoin.abi,
    functionName: 'balanceOf',
    args: [depositor.address],
  });
  expect(after - before).toBe(worth);
  // Withdraw rounds the shares it burns up: what remains is dust below one wei of USDe.
  const left = await client.readContract({
    address: vault,
    abi: YieldVault.abi,
    functionName: 'balanceOf',
    args: [depositor.address],
  });
  expect(left).toBeLessThan(VIRTUAL_SHARES);
  expect(
    await client.readContract({
      address: vault,
      abi: YieldVault.abi,
      functionName: 'convertToAssets',
      args: [left],
    }),
  ).toBe(0n);
}, 180_000);

it('a worker SIGKILLed after the deploy transaction was sent: another worker finishes and exactly one contract set exists', async () => {
  await world.stopWorkers();
  const first = startWorkerProcess(world.workerEnv);
  const client = world.publicClient(YIELD_CHAIN);
  const automine = (on: boolean) => client.request({ method: 'evm_setAutomine', params: [on] } as never);
  let id: string;
  try {
    await waitForOutput(first, /worker polling/);
    // The chain is this file's own: holding its blocks keeps the deploy transaction in the pool, so the kill
    // lands between its broadcast and its receipt however fast the worker would otherwise see it mined.
    await automine(false);
    id = await createAndDeploy('Crash Test');
    // Recorded, then broadcast: kill as soon as the node knows the transaction.
    const sent = await waitFor(
      async () => {
        const row = await world.app.db
          .selectFrom('yield_deployments')
          .selectAll()
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        const known = row.deploy_tx_hash
          ? await client.getTransaction({ hash: row.deploy_tx_hash as Hex }).catch(() => null)
          : null;
        return { status: row.status, known: known !== null, hash: row.deploy_tx_hash };
      },
      (state) => state.known,
      90_000,
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    expect(sent.status).toBe('deploying');
  } finally {
    if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
    await automine(true);
    await client.request({ method: 'evm_mine', params: [] } as never);
    await world.startWorkers();
  }

  const active = await waitFor(
    () => statusOf(id),
    (body) => body.status !== 'deploying',
    180_000,
  );
  expect(active.status).toBe('active');
  const sets = await world.app.db
    .selectFrom('yield_contract_sets')
    .selectAll()
    .where('deployed_by_deployment_id', '=', id)
    .execute();
  expect(sets).toHaveLength(1);
  expect(active.contractSetId).toBe(sets[0]!.id);
  // On chain too: one VaultSetDeployed for this set id, the vaults the API shows.
  const events = await world.publicClient(YIELD_CHAIN).getContractEvents({
    abi: YieldVaultFactory.abi,
    eventName: 'VaultSetDeployed',
    args: { setId: vaultSetIdOf(id) },
    fromBlock: 'earliest',
  });
  expect(events).toHaveLength(1);
  expect(events[0]!.args.vaults).toEqual(
    active.contracts.vaults.map((vault: { address: Address }) => vault.address),
  );
  expect(events[0]!.transactionHash).toBe(sets[0]!.tx_hash);
}, 300_000);

function startWorkerProcess(env: Record<string, string>): ChildProcess & { output: string } {
  // `--import tsx` rather than tsx's CLI, so the SIGKILL reaches the worker itself (no grandchild left).
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
    cwd: join(__dirname, '..', '..'),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as ChildProcess & { output: string };
  child.output = '';
  child.stdout!.on('data', (chunk) => (child.output += chunk));
  child.stderr!.on('data', (chunk) => (child.output += chunk));
  return child;
}

async function waitForOutput(child: ChildProcess & { output: string }, pattern: RegExp, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(child.output)) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`worker did not print ${pattern}: ${child.output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
