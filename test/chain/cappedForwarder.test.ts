import { randomUUID } from 'node:crypto';
import { type Address, type Hex, getAddress, hexToBigInt, keccak256, parseEventLogs, toHex } from 'viem';
import { type PrivateKeyAccount, generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { CappedForwarder, CappedForwarderFactory, ForwarderFactory } from '../../contracts/artifacts';
import { predictDepositAddress, sessionIdToBytes16 } from '../../chain/depositAddress';
import { forwarderRefundTypedData, refundIdToBytes32 } from '../../chain/forwarderRefunds';
import {
  ACCOUNTS,
  type Actor,
  SETTLEMENT_CHAIN,
  type SettlementChain,
  type SettlementChains,
  balanceOf,
  expectRevert,
  freshAddress,
  pay,
  previewDeposit,
  send,
  startSettlementChains,
} from './settlementFixture';

/**
 * The capped forwarder of a session that holds an overpayment (`overpayment: "hold"`, issue 41): its flushes
 * together never settle more than the session's amount (the cap, in micro-dollars, counted at par in 18
 * decimals), what was paid above it stays in the forwarder, and it leaves only as a refund the payout address
 * signed. Real anvil, the local settlement stand-ins (par swap rates, sUSDe vault).
 */

const USD = 10n ** 18n;
const MICRO_USD_TO_PAR = 10n ** 12n;

let chains: SettlementChains;
let l1: SettlementChain;

beforeAll(async () => {
  chains = await startSettlementChains([SETTLEMENT_CHAIN]);
  l1 = chains.chain(SETTLEMENT_CHAIN);
}, 240_000);

afterAll(async () => {
  await chains?.stop();
});

interface CappedSession {
  sessionId: Hex;
  merchant: PrivateKeyAccount;
  capMicroUsd: bigint;
  forwarder: Address;
}

/** A new session's capped deposit address (predicted by the factory, not deployed), for a fresh payout key. */
async function cappedSession(capMicroUsd: bigint): Promise<CappedSession> {
  const merchant = privateKeyToAccount(generatePrivateKey());
  const sessionId = sessionIdToBytes16(randomUUID());
  const forwarder = await l1.publicClient.readContract({
    address: l1.contracts.cappedForwarderFactory,
    abi: CappedForwarderFactory.abi,
    functionName: 'predict',
    args: [sessionId, merchant.address, capMicroUsd],
  });
  return { sessionId, merchant, capMicroUsd, forwarder };
}

async function deployCapped(session: CappedSession, actor: Actor = 'payer'): Promise<void> {
  await send(l1, actor, {
    address: l1.contracts.cappedForwarderFactory,
    abi: CappedForwarderFactory.abi,
    functionName: 'deploy',
    args: [session.sessionId, session.merchant.address, session.capMicroUsd],
  });
}

/** Flushes `token` as the operator (minimum 0: the contract's par floor still applies); returns `Flushed`'s args. */
async function flushCapped(forwarder: Address, token: Address) {
  const receipt = await send(l1, 'operator', {
    address: forwarder,
    abi: CappedForwarder.abi,
    functionName: 'flush',
    args: [token, 0n],
  });
  const flushed = parseEventLogs({ abi: CappedForwarder.abi, logs: receipt.logs, eventName: 'Flushed' });
  expect(flushed).toHaveLength(1);
  return flushed[0]!.args;
}

const flushCall = (forwarder: Address, token: Address) =>
  ({ address: forwarder, abi: CappedForwarder.abi, functionName: 'flush', args: [token, 0n] }) as const;

function read<const name extends 'flushedAtPar' | 'capMicroUsd' | 'merchant'>(
  forwarder: Address,
  name: name,
) {
  return l1.publicClient.readContract({ address: forwarder, abi: CappedForwarder.abi, functionName: name });
}

async function signedRefund(session: CappedSession, token: Address, to: Address, amount: bigint) {
  const refund = {
    chainId: l1.chainId,
    forwarder: session.forwarder,
    token,
    to,
    amount,
    refundId: refundIdToBytes32(randomUUID()),
  };
  const signature = await session.merchant.signTypedData(forwarderRefundTypedData(refund));
  return { refund, signature };
}

const refundCall = ({ refund, signature }: Awaited<ReturnType<typeof signedRefund>>) =>
  ({
    address: refund.forwarder,
    abi: CappedForwarder.abi,
    functionName: 'refund',
    args: [refund.token, refund.to, refund.amount, refund.refundId, signature],
  }) as const;

describe('the cap', () => {
  it('an exact payment is settled whole; a second flush has nothing to move', async () => {
    const session = await cappedSession(25_000_000n);
    const { usdc, susde } = l1.contracts;
    await pay(l1, usdc, session.forwarder, 25_000_000n);
    await deployCapped(session);
    const shares = await previewDeposit(l1, 25n * USD);

    expect(await flushCapped(session.forwarder, usdc)).toMatchObject({
      amountIn: 25_000_000n,
      usdeAmount: 25n * USD,
    });
    expect(await balanceOf(l1, susde, session.merchant.address)).toBe(shares);
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(0n);
    expect(await read(session.forwarder, 'flushedAtPar')).toBe(25n * USD);
    await expectRevert(l1, 'operator', flushCall(session.forwarder, usdc), 'NothingToFlush');
  });

  it('an overpayment: the flush settles the amount, the surplus stays, a second flush is refused with FlushCapReached', async () => {
    const session = await cappedSession(25_000_000n);
    const { usdc, susde } = l1.contracts;
    await pay(l1, usdc, session.forwarder, 30_000_000n);
    await deployCapped(session);
    expect(await read(session.forwarder, 'capMicroUsd')).toBe(25_000_000n);
    const shares = await previewDeposit(l1, 25n * USD);

    expect(await flushCapped(session.forwarder, usdc)).toMatchObject({
      amountIn: 25_000_000n,
      usdeAmount: 25n * USD,
    });
    expect(await balanceOf(l1, susde, session.merchant.address)).toBe(shares);
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(5_000_000n);
    await expectRevert(l1, 'operator', flushCall(session.forwarder, usdc), 'FlushCapReached', [
      25n * USD,
      25n * USD,
    ]);
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(5_000_000n);
    expect(await balanceOf(l1, susde, session.merchant.address)).toBe(shares);
  });

  it('two partial deposits: each flush settles what the cap still allows, the rest of the second is held', async () => {
    const session = await cappedSession(25_000_000n);
    const { usdc } = l1.contracts;
    await pay(l1, usdc, session.forwarder, 10_000_000n);
    await deployCapped(session);
    expect(await flushCapped(session.forwarder, usdc)).toMatchObject({ amountIn: 10_000_000n });
    await pay(l1, usdc, session.forwarder, 20_000_000n);
    expect(
      await l1.publicClient.readContract({
        address: session.forwarder,
        abi: CappedForwarder.abi,
        functionName: 'flushable',
        args: [usdc],
      }),
    ).toBe(15_000_000n);
    expect(await flushCapped(session.forwarder, usdc)).toMatchObject({ amountIn: 15_000_000n });
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(5_000_000n);
    expect(await read(session.forwarder, 'flushedAtPar')).toBe(25n * USD);
  });

  it('mixed tokens share one cap, counted at par across 6 and 18 decimals; less than one USDC unit of room moves no USDC', async () => {
    const session = await cappedSession(25_000_000n);
    const { usdc, usdt, usde } = l1.contracts;
    await pay(l1, usdc, session.forwarder, 10_000_000n);
    await pay(l1, usdt, session.forwarder, 10_000_000n);
    // 4.9999995 USDe: afterwards half a micro-dollar of room is left, less than one USDC base unit.
    await pay(l1, usde, session.forwarder, 4_999_999_500_000_000_000n);
    await deployCapped(session);
    await flushCapped(session.forwarder, usdc);
    await flushCapped(session.forwarder, usdt);
    expect(await flushCapped(session.forwarder, usde)).toMatchObject({
      amountIn: 4_999_999_500_000_000_000n,
    });
    expect(await read(session.forwarder, 'flushedAtPar')).toBe(25n * USD - 500_000_000_000n);

    await pay(l1, usdc, session.forwarder, 3_000_000n);
    await expectRevert(l1, 'operator', flushCall(session.forwarder, usdc), 'FlushCapReached');
    await pay(l1, usde, session.forwarder, 2n * USD);
    expect(await flushCapped(session.forwarder, usde)).toMatchObject({ amountIn: 500_000_000_000n });
    expect(await read(session.forwarder, 'flushedAtPar')).toBe(25n * USD);
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(3_000_000n);
    expect(await balanceOf(l1, usde, session.forwarder)).toBe(2n * USD - 500_000_000_000n);
    await expectRevert(l1, 'operator', flushCall(session.forwarder, usde), 'FlushCapReached');
  });
});

describe('the held surplus', () => {
  it('goes back to where the payout address signed, once; a refund signed by anyone else or redirected moves nothing', async () => {
    const session = await cappedSession(25_000_000n);
    const { usdc } = l1.contracts;
    await pay(l1, usdc, session.forwarder, 30_000_000n);
    await deployCapped(session);
    await flushCapped(session.forwarder, usdc);
    const payer = freshAddress();

    const forged = await signedRefund(session, usdc, ACCOUNTS.attacker.address, 5_000_000n);
    const attackerKey = privateKeyToAccount(ACCOUNTS.attacker.privateKey);
    const byAttacker = {
      ...forged,
      signature: await attackerKey.signTypedData(forwarderRefundTypedData(forged.refund)),
    };
    await expectRevert(l1, 'attacker', refundCall(byAttacker), 'InvalidRefundSignature');
    const genuine = await signedRefund(session, usdc, payer, 5_000_000n);
    const redirected = { ...genuine, refund: { ...genuine.refund, to: ACCOUNTS.attacker.address } };
    await expectRevert(l1, 'attacker', refundCall(redirected), 'InvalidRefundSignature');
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(5_000_000n);

    // Anyone may relay the genuine one: the attacker pays the gas and the payer gets the surplus.
    const receipt = await send(l1, 'attacker', refundCall(genuine));
    expect(
      parseEventLogs({ abi: CappedForwarder.abi, logs: receipt.logs, eventName: 'Refunded' }),
    ).toHaveLength(1);
    expect(await balanceOf(l1, usdc, payer)).toBe(5_000_000n);
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(0n);
    await expectRevert(l1, 'operator', refundCall(genuine), 'RefundIdUsed', [genuine.refund.refundId]);
    expect(await balanceOf(l1, usdc, ACCOUNTS.attacker.address)).toBe(0n);
  });

  it('no flush by anyone else moves it, and the implementation itself holds nothing and flushes nothing', async () => {
    const session = await cappedSession(25_000_000n);
    const { usdc } = l1.contracts;
    await pay(l1, usdc, session.forwarder, 30_000_000n);
    await deployCapped(session);
    for (const actor of ['attacker', 'owner', 'payer'] as const)
      await expectRevert(l1, actor, flushCall(session.forwarder, usdc), 'NotOperator');
    await flushCapped(session.forwarder, usdc);
    for (const actor of ['attacker', 'owner'] as const)
      await expectRevert(l1, actor, flushCall(session.forwarder, usdc), 'NotOperator');
    const implementation = l1.contracts.cappedForwarderImplementation;
    await expectRevert(l1, 'operator', flushCall(implementation, usdc), 'NotAClone');
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(5_000_000n);
  });
});

describe('the address commits to the cap', () => {
  it('the same session with another cap, another merchant or no cap is another address; the funded one keeps its cap', async () => {
    const session = await cappedSession(25_000_000n);
    const { usdc } = l1.contracts;
    await pay(l1, usdc, session.forwarder, 30_000_000n);
    const predict = (merchant: Address, cap: bigint) =>
      l1.publicClient.readContract({
        address: l1.contracts.cappedForwarderFactory,
        abi: CappedForwarderFactory.abi,
        functionName: 'predict',
        args: [session.sessionId, merchant, cap],
      });
    const biggerCap = await predict(session.merchant.address, 30_000_000n);
    const otherMerchant = await predict(ACCOUNTS.attacker.address, 25_000_000n);
    const uncapped = await l1.publicClient.readContract({
      address: l1.contracts.forwarderFactory,
      abi: ForwarderFactory.abi,
      functionName: 'predict',
      args: [session.sessionId, session.merchant.address],
    });
    expect(new Set([session.forwarder, biggerCap, otherMerchant, uncapped]).size).toBe(4);

    // The attacker deploys the session with a bigger cap: it lands elsewhere, empty, and the real one is untouched.
    await send(l1, 'attacker', {
      address: l1.contracts.cappedForwarderFactory,
      abi: CappedForwarderFactory.abi,
      functionName: 'deploy',
      args: [session.sessionId, session.merchant.address, 30_000_000n],
    });
    expect(await l1.publicClient.getCode({ address: biggerCap })).not.toBe(undefined);
    await expectRevert(l1, 'operator', flushCall(biggerCap, usdc), 'NothingToFlush');
    expect(await l1.publicClient.getCode({ address: session.forwarder })).toBe(undefined);

    await deployCapped(session, 'attacker');
    expect(await read(session.forwarder, 'capMicroUsd')).toBe(25_000_000n);
    expect(await read(session.forwarder, 'merchant')).toBe(session.merchant.address);
    expect(await flushCapped(session.forwarder, usdc)).toMatchObject({ amountIn: 25_000_000n });
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(5_000_000n);
  });

  it('the off-chain prediction matches the factory for capped and uncapped addresses; a zero cap is refused', async () => {
    const session = await cappedSession(123_456_789n);
    const uuid = `${session.sessionId.slice(2, 10)}-${session.sessionId.slice(10, 14)}-${session.sessionId.slice(14, 18)}-${session.sessionId.slice(18, 22)}-${session.sessionId.slice(22)}`;
    expect(
      predictDepositAddress({
        factory: l1.contracts.cappedForwarderFactory,
        implementation: l1.contracts.cappedForwarderImplementation,
        sessionId: uuid,
        chainId: l1.chainId,
        merchant: session.merchant.address,
        capMicroUsd: 123_456_789n,
      }),
    ).toBe(session.forwarder);
    expect(
      predictDepositAddress({
        factory: l1.contracts.forwarderFactory,
        implementation: l1.contracts.forwarderImplementation,
        sessionId: uuid,
        chainId: l1.chainId,
        merchant: session.merchant.address,
      }),
    ).toBe(
      await l1.publicClient.readContract({
        address: l1.contracts.forwarderFactory,
        abi: ForwarderFactory.abi,
        functionName: 'predict',
        args: [session.sessionId, session.merchant.address],
      }),
    );
    await expectRevert(
      l1,
      'payer',
      {
        address: l1.contracts.cappedForwarderFactory,
        abi: CappedForwarderFactory.abi,
        functionName: 'deploy',
        args: [session.sessionId, session.merchant.address, 0n],
      },
      'ZeroCap',
    );
    expect(
      await l1.publicClient.readContract({
        address: l1.contracts.cappedForwarderFactory,
        abi: CappedForwarderFactory.abi,
        functionName: 'settlement',
      }),
    ).toEqual(
      await l1.publicClient.readContract({
        address: l1.contracts.forwarderFactory,
        abi: ForwarderFactory.abi,
        functionName: 'settlement',
      }),
    );
  });
});

/** Deterministic pseudo-random numbers: keccak256(seed, label, counter). */
function fuzzer(seed: string) {
  let counter = 0;
  return (label: string, bound: bigint) =>
    hexToBigInt(keccak256(toHex(`${seed}:${label}:${counter++}`))) % bound;
}

describe('fuzz: random caps, tokens and deposits', () => {
  it('flushed ≤ cap and flushed + held = deposited, per token and at par, after every flush', async () => {
    const random = fuzzer('capped-forwarder-1');
    const tokens = [
      { address: l1.contracts.usdc, scale: 10n ** 12n },
      { address: l1.contracts.usdt, scale: 10n ** 12n },
      { address: l1.contracts.usde, scale: 1n },
    ];
    for (let run = 0; run < 30; run++) {
      const cap = 1n + random('cap', 60_000_000n);
      const session = await cappedSession(cap);
      await deployCapped(session);
      const deposited = new Map<Address, bigint>();
      const flushed = new Map<Address, bigint>();
      const deposits = 1n + random('deposits', 4n);
      for (let index = 0n; index < deposits; index++) {
        const token = tokens[Number(random('token', 3n))]!;
        // Up to 40 USD, at the token's own precision (USDe amounts have 18-decimal dust).
        const amount = 1n + random('amount', (40n * USD) / token.scale);
        await pay(l1, token.address, session.forwarder, amount);
        deposited.set(token.address, (deposited.get(token.address) ?? 0n) + amount);
        for (const { address } of tokens) {
          const room = await l1.publicClient.readContract({
            address: session.forwarder,
            abi: CappedForwarder.abi,
            functionName: 'flushable',
            args: [address],
          });
          if (room === 0n) continue;
          const { amountIn } = await flushCapped(session.forwarder, address);
          expect(amountIn).toBe(room);
          flushed.set(address, (flushed.get(address) ?? 0n) + amountIn);
        }
        let flushedAtPar = 0n;
        let depositedAtPar = 0n;
        for (const { address, scale } of tokens) {
          const held = await balanceOf(l1, address, session.forwarder);
          expect((flushed.get(address) ?? 0n) + held).toBe(deposited.get(address) ?? 0n);
          flushedAtPar += (flushed.get(address) ?? 0n) * scale;
          depositedAtPar += (deposited.get(address) ?? 0n) * scale;
        }
        expect(await read(session.forwarder, 'flushedAtPar')).toBe(flushedAtPar);
        expect(flushedAtPar).toBeLessThanOrEqual(cap * MICRO_USD_TO_PAR);
        // Everything flushes while the deposits fit under the cap; beyond it the cap is used to within one unit.
        if (depositedAtPar <= cap * MICRO_USD_TO_PAR) expect(flushedAtPar).toBe(depositedAtPar);
        else {
          const room = cap * MICRO_USD_TO_PAR - flushedAtPar;
          for (const { address, scale } of tokens)
            if ((await balanceOf(l1, address, session.forwarder)) > 0n) expect(room).toBeLessThan(scale);
        }
      }
      expect(getAddress(await read(session.forwarder, 'merchant'))).toBe(session.merchant.address);
    }
  }, 240_000);
});
