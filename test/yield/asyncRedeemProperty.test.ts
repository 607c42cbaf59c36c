import fc from 'fast-check';
import { type Address, parseEventLogs } from 'viem';
import { LocalStakedUSDeV2, YieldVault } from '../../contracts/artifacts';
import {
  ACCOUNTS,
  SETTLEMENT_CHAIN,
  type SettlementChain,
  type SettlementChains,
  balanceOf,
  send,
  startSettlementChains,
} from '../chain/settlementFixture';
import {
  type AsyncVault,
  DAY,
  SEVEN_DAYS,
  USDE,
  addYield,
  deployAsyncVault,
  deposit,
  readVault,
  setCooldown,
  travel,
} from './asyncVaultChain';

/**
 * Issue 32, property: over random deposits, redeem requests, sUSDe rate increases, claims, time travel and
 * cooldown switches, the vault never owes more than it holds (every open request's unstaker holds at least the
 * request's assets, the shares are worth no more than the vault's sUSDe, and at the end everybody gets out), and
 * no holder claims another's assets (a claim pays exactly what its own requests lose, nobody else's changes, and a
 * claim in another holder's name is refused).
 */

const HOLDERS = ['payer', 'attacker', 'operator'] as const;

type Step =
  | { kind: 'deposit'; holder: number; assets: bigint }
  | { kind: 'request'; holder: number; percent: number }
  | { kind: 'yield'; assets: bigint }
  | { kind: 'claim'; holder: number }
  | { kind: 'steal'; holder: number; victim: number }
  | { kind: 'travel'; seconds: number }
  | { kind: 'cooldown'; on: boolean };

const holder = fc.integer({ min: 0, max: HOLDERS.length - 1 });
const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('deposit' as const),
        holder,
        assets: fc.bigInt({ min: USDE('0.001'), max: USDE('500') }),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('request' as const),
        holder,
        percent: fc.integer({ min: 1, max: 100 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('yield' as const),
        assets: fc.bigInt({ min: 1n, max: USDE('20') }),
      }),
    },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('claim' as const), holder }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('steal' as const), holder, victim: holder }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('travel' as const),
        seconds: fc.integer({ min: 3600, max: 8 * DAY }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('cooldown' as const), on: fc.boolean() }) },
  ),
  { minLength: 6, maxLength: 14 },
);
/** Every holder deposits first, so requests and claims have shares to work on. */
const scenarios = fc.record({
  opening: fc.tuple(...HOLDERS.map(() => fc.bigInt({ min: USDE('1'), max: USDE('500') }))),
  steps,
});

let chains: SettlementChains;
let chain: SettlementChain;

beforeAll(async () => {
  chains = await startSettlementChains([SETTLEMENT_CHAIN]);
  chain = chains.chain(SETTLEMENT_CHAIN);
}, 240_000);

afterAll(async () => {
  await chains?.stop();
});

const addressOf = (index: number): Address => ACCOUNTS[HOLDERS[index]!].address;

interface RequestView {
  controller: Address;
  shares: bigint;
  assets: bigint;
}

/** Every open request of every holder, by id. */
async function openRequests(setup: AsyncVault): Promise<Map<bigint, RequestView>> {
  const requests = new Map<bigint, RequestView>();
  for (let index = 0; index < HOLDERS.length; index++) {
    const ids = await readVault<bigint[]>(setup, 'openRedeemRequests', [addressOf(index)]);
    for (const id of ids) {
      const [controller, shares, assets] = await readVault<[Address, bigint, bigint, bigint]>(
        setup,
        'redeemRequest',
        [id],
      );
      requests.set(id, { controller, shares, assets });
    }
  }
  return requests;
}

/** What a request's unstaker holds: USDe still in sUSDe's cooldown plus USDe already unstaked. */
async function unstakerFunds(setup: AsyncVault, unstaker: Address): Promise<bigint> {
  const [, cooling] = await chain.publicClient.readContract({
    address: setup.susde,
    abi: LocalStakedUSDeV2.abi,
    functionName: 'cooldowns',
    args: [unstaker],
  });
  return cooling + (await balanceOf(chain, chain.contracts.usde, unstaker));
}

/** The vault never owes more than it holds. */
async function checkSolvent(setup: AsyncVault, unstakers: Map<bigint, Address>): Promise<void> {
  for (const [id, request] of await openRequests(setup)) {
    expect(await unstakerFunds(setup, unstakers.get(id)!)).toBeGreaterThanOrEqual(request.assets);
  }
  let owed = 0n;
  for (let index = 0; index < HOLDERS.length; index++) {
    const shares = await readVault<bigint>(setup, 'balanceOf', [addressOf(index)]);
    owed += await readVault<bigint>(setup, 'convertToAssets', [shares]);
  }
  expect(owed).toBeLessThanOrEqual(await readVault<bigint>(setup, 'totalAssets'));
}

async function claimAll(setup: AsyncVault, index: number): Promise<void> {
  const controller = addressOf(index);
  const shares = await readVault<bigint>(setup, 'maxRedeem', [controller]);
  if (shares === 0n) return;
  const before = await openRequests(setup);
  const usdeBefore = await balanceOf(chain, chain.contracts.usde, controller);
  await send(chain, HOLDERS[index]!, {
    address: setup.vault,
    abi: YieldVault.abi,
    functionName: 'redeem',
    args: [shares, controller, controller],
  });
  const received = (await balanceOf(chain, chain.contracts.usde, controller)) - usdeBefore;
  const after = await openRequests(setup);
  let ownLoss = 0n;
  for (const [id, request] of before) {
    const now = after.get(id) ?? { ...request, shares: 0n, assets: 0n };
    if (request.controller === controller) ownLoss += request.assets - now.assets;
    else expect(now).toEqual(request);
  }
  // Synchronous redeems (no open request, cooldown off) take no request; then the loss is zero and the shares paid.
  if (before.size !== 0 && [...before.values()].some((request) => request.controller === controller)) {
    expect(received).toBe(ownLoss);
  }
}

async function runStep(setup: AsyncVault, step: Step, unstakers: Map<bigint, Address>): Promise<void> {
  switch (step.kind) {
    case 'deposit':
      await deposit(setup, HOLDERS[step.holder]!, step.assets);
      return;
    case 'yield':
      await addYield(setup, step.assets);
      return;
    case 'travel':
      await travel(chain, step.seconds);
      return;
    case 'cooldown':
      await setCooldown(setup, step.on ? SEVEN_DAYS : 0);
      return;
    case 'claim':
      await claimAll(setup, step.holder);
      return;
    case 'steal': {
      if (step.holder === step.victim) return;
      const victim = addressOf(step.victim);
      const claimable = await readVault<bigint>(setup, 'maxRedeem', [victim]);
      const thief = ACCOUNTS[HOLDERS[step.holder]!];
      const attempt = chain.publicClient.simulateContract({
        address: setup.vault,
        abi: YieldVault.abi,
        functionName: 'redeem',
        args: [claimable === 0n ? 1n : claimable, thief.address, victim],
        account: thief.address,
      });
      await expect(attempt).rejects.toThrow();
      return;
    }
    case 'request':
      await request(setup, step, unstakers);
  }
}

async function request(
  setup: AsyncVault,
  step: { holder: number; percent: number },
  unstakers: Map<bigint, Address>,
): Promise<void> {
  const owner = addressOf(step.holder);
  const shares = ((await readVault<bigint>(setup, 'balanceOf', [owner])) * BigInt(step.percent)) / 100n;
  const cooldownOn = await readVault<boolean>(setup, 'cooldownActive');
  const worth = await readVault<bigint>(setup, 'convertToAssets', [shares]);
  if (!cooldownOn || worth === 0n) return;
  const receipt = await send(chain, HOLDERS[step.holder]!, {
    address: setup.vault,
    abi: YieldVault.abi,
    functionName: 'requestRedeem',
    args: [shares, owner, owner],
  });
  const [requested] = parseEventLogs({ abi: YieldVault.abi, logs: receipt.logs, eventName: 'RedeemRequest' });
  const requestId = requested!.args.requestId;
  // The request's unstaker clone is the account whose sUSDe went into the cooldown (sUSDe's Withdraw owner).
  const [cooled] = parseEventLogs({ abi: LocalStakedUSDeV2.abi, logs: receipt.logs, eventName: 'Withdraw' });
  const unstaker = cooled!.args.owner;
  expect(unstaker).not.toBe(setup.vault);
  unstakers.set(requestId, unstaker);
  const [, , assets] = await readVault<[Address, bigint, bigint, bigint]>(setup, 'redeemRequest', [
    requestId,
  ]);
  expect(assets).toBe(worth);
}

/** Everybody gets out: the cooldown switched off, every request claimed and every share redeemed. */
async function exitEverybody(setup: AsyncVault): Promise<void> {
  await setCooldown(setup, 0);
  for (let index = 0; index < HOLDERS.length; index++) {
    await claimAll(setup, index);
    await claimAll(setup, index);
    expect(await readVault<bigint>(setup, 'balanceOf', [addressOf(index)])).toBe(0n);
  }
  expect(await readVault<bigint>(setup, 'totalSupply')).toBe(0n);
}

describe('asynchronous redemption property (fast-check)', () => {
  it('over random deposits, requests, rate increases, claims and cooldown switches the vault stays solvent and nobody claims another’s assets', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async ({ opening, steps: scenario }) => {
        const setup = await deployAsyncVault(chain);
        const unstakers = new Map<bigint, Address>();
        for (const [index, assets] of opening.entries()) await deposit(setup, HOLDERS[index]!, assets);
        for (const step of scenario) {
          await runStep(setup, step, unstakers);
          await checkSolvent(setup, unstakers);
        }
        await exitEverybody(setup);
      }),
      { numRuns: 12 },
    );
  }, 600_000);
});
