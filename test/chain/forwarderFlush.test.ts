import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Address, encodeAbiParameters, parseEventLogs, parseUnits } from 'viem';
import {
  Forwarder,
  ForwarderFactory,
  LocalMessenger,
  LocalStakedUSDe,
  LocalSwapRouter,
  StakingComposer,
  TestStablecoin,
} from '../../contracts/artifacts';
import { forwarderFactoryAddresses, readForwarderSettlement } from '../../chain/forwarderFactory';
import {
  LOCAL_MAX_SLIPPAGE_BPS,
  LOCAL_RELAYER,
  LOCAL_SETTLEMENT_CHAIN_ID,
  LOCAL_SETTLEMENT_OPERATOR,
  parRateE18,
} from '../../dev/chains/localSettlement';
import { type Relayer, startRelayer } from '../../dev/relayer';
import { createLogger } from '../../logging/logger';
import {
  ACCOUNTS,
  LAYER2_CHAIN,
  SETTLEMENT_CHAIN,
  type SettlementChain,
  type SettlementChains,
  balanceOf,
  deployForwarder,
  expectRevert,
  flush,
  newSession,
  pay,
  previewDeposit,
  send,
  startSettlementChains,
} from './settlementFixture';

const USDC_PAR = parRateE18({ decimalsIn: 6, decimalsOut: 18 });
const silentLogger = createLogger({ level: 'silent' });

let chains: SettlementChains;
let l1: SettlementChain;
let l2: SettlementChain;

// Two anvils and a full contract deployment each: it can take minutes when the run is loaded.
beforeAll(async () => {
  chains = await startSettlementChains([SETTLEMENT_CHAIN, LAYER2_CHAIN]);
  l1 = chains.chain(SETTLEMENT_CHAIN);
  l2 = chains.chain(LAYER2_CHAIN);
  // sUSDe worth more than one USDe: a first staker, then yield (USDe sent to the vault).
  const { usde, susde } = l1.contracts;
  await pay(l1, usde, ACCOUNTS.payer.address, parseUnits('1000', 18));
  await send(l1, 'payer', {
    address: usde,
    abi: LocalStakedUSDe.abi,
    functionName: 'approve',
    args: [susde, parseUnits('1000', 18)],
  });
  await send(l1, 'payer', {
    address: susde,
    abi: LocalStakedUSDe.abi,
    functionName: 'deposit',
    args: [parseUnits('1000', 18), ACCOUNTS.payer.address],
  });
  await pay(l1, usde, susde, parseUnits('37.123456789', 18));
}, 240_000);

afterAll(async () => {
  await chains?.stop();
});

async function setRate(chain: SettlementChain, tokenIn: Address, rateE18: bigint): Promise<void> {
  await send(chain, 'owner', {
    address: chain.contracts.swapRouter,
    abi: LocalSwapRouter.abi,
    functionName: 'setRate',
    args: [tokenIn, chain.contracts.usde, rateE18],
  });
}

describe('local settlement deployment', () => {
  it('configures every chain to settle on the Ethereum Sepolia stand-in through the same stand-in addresses', async () => {
    const expectedFactory = forwarderFactoryAddresses(ACCOUNTS.owner.address);
    for (const chain of [l1, l2]) {
      const { contracts } = chain;
      expect(contracts.forwarderFactory).toBe(expectedFactory.forwarderFactory);
      expect(await readForwarderSettlement(chain.publicClient, contracts)).toEqual({
        operator: LOCAL_SETTLEMENT_OPERATOR.address,
        swapRouter: contracts.swapRouter,
        usde: contracts.usde,
        stakedUsde: contracts.susde,
        messenger: contracts.messenger,
        settlementChainId: BigInt(LOCAL_SETTLEMENT_CHAIN_ID),
        settlementComposer: contracts.stakingComposer,
        maxSlippageBps: LOCAL_MAX_SLIPPAGE_BPS,
      });
      expect(
        await chain.publicClient.readContract({
          address: contracts.forwarderFactory,
          abi: ForwarderFactory.abi,
          functionName: 'owner',
        }),
      ).toBe(ACCOUNTS.owner.address);
      expect(
        await chain.publicClient.readContract({
          address: contracts.messenger,
          abi: LocalMessenger.abi,
          functionName: 'relayer',
        }),
      ).toBe(LOCAL_RELAYER.address);
      expect(
        await chain.publicClient.readContract({
          address: contracts.susde,
          abi: LocalStakedUSDe.abi,
          functionName: 'symbol',
        }),
      ).toBe('sUSDe');
    }
    for (const key of ['swapRouter', 'susde', 'messenger', 'stakingComposer'] as const) {
      expect(l2.contracts[key]).toBe(l1.contracts[key]);
    }
    expect(
      await l1.publicClient.readContract({
        address: l1.contracts.swapRouter,
        abi: LocalSwapRouter.abi,
        functionName: 'rate',
        args: [l1.contracts.usdt, l1.contracts.usde],
      }),
    ).toBe(USDC_PAR);
  });

  it('every clone knows its factory through the implementation', async () => {
    const session = await newSession(l1);
    await deployForwarder(l1, session);
    expect(
      await l1.publicClient.readContract({
        address: session.forwarder,
        abi: Forwarder.abi,
        functionName: 'factory',
      }),
    ).toBe(l1.contracts.forwarderFactory);
  });
});

describe('flush on the settlement chain', () => {
  it('swaps USDC to USDe at the router rate and stakes exactly previewDeposit of it as sUSDe for the merchant', async () => {
    const { usdc, usde, susde, swapRouter } = l1.contracts;
    const rate = (USDC_PAR * 9_987n) / 10_000n; // 0.13 % below par, inside the 0.5 % tolerance
    await setRate(l1, usdc, rate);
    const session = await newSession(l1);
    const amountIn = 1_234_567_891n; // 1,234.567891 USDC
    await pay(l1, usdc, session.forwarder, amountIn);
    await deployForwarder(l1, session);

    const usdeAmount = (amountIn * rate) / 10n ** 18n;
    const shares = await previewDeposit(l1, usdeAmount);
    expect(shares).toBeLessThan(usdeAmount); // the share price is not 1:1

    const { flushed } = await flush(l1, session.forwarder, usdc, usdeAmount);
    expect(flushed).toEqual({ token: usdc, amountIn, usdeAmount, bridged: false, sharesOrNonce: shares });
    expect(await balanceOf(l1, susde, session.merchant)).toBe(shares);
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(0n);
    expect(await balanceOf(l1, usde, session.forwarder)).toBe(0n);
    expect(await balanceOf(l1, susde, session.forwarder)).toBe(0n);
    const leftAllowance = await l1.publicClient.readContract({
      address: usdc,
      abi: TestStablecoin.abi,
      functionName: 'allowance',
      args: [session.forwarder, swapRouter],
    });
    expect(leftAllowance).toBe(0n);
    await setRate(l1, usdc, USDC_PAR);
  });

  it('stakes a USDe deposit as it is, with no swap', async () => {
    const { usde, susde, swapRouter } = l1.contracts;
    const session = await newSession(l1);
    const amountIn = parseUnits('250.000000000000000123', 18);
    await pay(l1, usde, session.forwarder, amountIn);
    await deployForwarder(l1, session);
    const shares = await previewDeposit(l1, amountIn);

    const { receipt, flushed } = await flush(l1, session.forwarder, usde, amountIn);
    expect(flushed).toEqual({
      token: usde,
      amountIn,
      usdeAmount: amountIn,
      bridged: false,
      sharesOrNonce: shares,
    });
    expect(await balanceOf(l1, susde, session.merchant)).toBe(shares);
    const swaps = parseEventLogs({ abi: LocalSwapRouter.abi, logs: receipt.logs, eventName: 'Swapped' });
    expect(swaps).toHaveLength(0);
    expect(receipt.logs.some((log) => log.address.toLowerCase() === swapRouter.toLowerCase())).toBe(false);
  });

  it('refuses a USDe flush whose minimum is above the deposit', async () => {
    const { usde } = l1.contracts;
    const session = await newSession(l1);
    await pay(l1, usde, session.forwarder, 1_000n);
    await deployForwarder(l1, session);
    await expectRevert(
      l1,
      'operator',
      { address: session.forwarder, abi: Forwarder.abi, functionName: 'flush', args: [usde, 1_001n] },
      'InsufficientOutput',
      [1_000n, 1_001n],
    );
    expect(await balanceOf(l1, usde, session.forwarder)).toBe(1_000n);
  });

  it('a minimum-out breach reverts with InsufficientOutput, leaves the funds in the forwarder, and a later flush succeeds', async () => {
    const { usdc, susde } = l1.contracts;
    const session = await newSession(l1);
    const amountIn = 80_000_000n; // 80 USDC
    await pay(l1, usdc, session.forwarder, amountIn);
    await deployForwarder(l1, session);

    // The venue moved after the operator's quote at par: 0.3 % less than the quoted minimum.
    const quoted = amountIn * 10n ** 12n;
    const slipped = (USDC_PAR * 9_970n) / 10_000n;
    await setRate(l1, usdc, slipped);
    await expectRevert(
      l1,
      'operator',
      { address: session.forwarder, abi: Forwarder.abi, functionName: 'flush', args: [usdc, quoted] },
      'InsufficientOutput',
      [(amountIn * slipped) / 10n ** 18n, quoted],
    );
    expect(await balanceOf(l1, usdc, session.forwarder)).toBe(amountIn);
    expect(await balanceOf(l1, susde, session.merchant)).toBe(0n);

    await setRate(l1, usdc, USDC_PAR);
    const shares = await previewDeposit(l1, quoted);
    const { flushed } = await flush(l1, session.forwarder, usdc, quoted);
    expect(flushed).toEqual({
      token: usdc,
      amountIn,
      usdeAmount: quoted,
      bridged: false,
      sharesOrNonce: shares,
    });
    expect(await balanceOf(l1, susde, session.merchant)).toBe(shares);
  });

  it('a pair the router does not swap reverts and leaves the funds', async () => {
    const { usdt } = l1.contracts;
    const session = await newSession(l1);
    await pay(l1, usdt, session.forwarder, 5_000_000n);
    await deployForwarder(l1, session);
    await setRate(l1, usdt, 0n);
    try {
      await expectRevert(
        l1,
        'operator',
        {
          address: session.forwarder,
          abi: [...Forwarder.abi, ...LocalSwapRouter.abi],
          functionName: 'flush',
          args: [usdt, 0n],
        },
        'UnsupportedPair',
      );
      expect(await balanceOf(l1, usdt, session.forwarder)).toBe(5_000_000n);
    } finally {
      await setRate(l1, usdt, USDC_PAR);
    }
  });

  it('refuses a flush of a token the forwarder does not hold', async () => {
    const session = await newSession(l1);
    await deployForwarder(l1, session);
    await expectRevert(
      l1,
      'operator',
      {
        address: session.forwarder,
        abi: Forwarder.abi,
        functionName: 'flush',
        args: [l1.contracts.usdc, 0n],
      },
      'NothingToFlush',
    );
  });
});

describe('flush on a layer-2 chain', () => {
  let relayer: Relayer | undefined;
  let stateDir: string;

  beforeAll(() => {
    stateDir = mkdtempSync(join(tmpdir(), 'relayer-state-'));
  });

  afterEach(async () => {
    await relayer?.stop();
    relayer = undefined;
  });

  afterAll(() => {
    rmSync(stateDir, { recursive: true, force: true });
  });

  const relayerChains = () =>
    [l1, l2].map(({ chainId, rpcUrl, contracts }) => ({ chainId, rpcUrl, messenger: contracts.messenger }));

  async function waitForDelivery(srcChainId: number, nonce: bigint, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const delivered = await l1.publicClient.readContract({
        address: l1.contracts.messenger,
        abi: LocalMessenger.abi,
        functionName: 'delivered',
        args: [BigInt(srcChainId), nonce],
      });
      if (delivered) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`packet ${srcChainId}:${nonce} not delivered within ${timeoutMs} ms`);
  }

  async function deliveriesOf(nonce: bigint) {
    return l1.publicClient.getContractEvents({
      address: l1.contracts.messenger,
      abi: LocalMessenger.abi,
      eventName: 'PacketDelivered',
      args: { srcChainId: BigInt(LAYER2_CHAIN), nonce },
      fromBlock: 0n,
    });
  }

  it('bridges the USDe with a packet the relayer delivers, staking exactly previewDeposit for the merchant on the settlement chain, once', async () => {
    relayer = await startRelayer({
      chains: relayerChains(),
      relayerPrivateKey: LOCAL_RELAYER.privateKey,
      pollIntervalMs: 100,
      logger: silentLogger,
    });
    const { usdt, usde, messenger, stakingComposer } = l2.contracts;
    const session = await newSession(l2);
    const amountIn = 500_000_001n; // 500.000001 USDT at par
    await pay(l2, usdt, session.forwarder, amountIn);
    await deployForwarder(l2, session);
    const usdeAmount = amountIn * 10n ** 12n;
    const lockedBefore = await balanceOf(l2, usde, messenger);
    const shares = await previewDeposit(l1, usdeAmount);

    const { receipt, flushed } = await flush(l2, session.forwarder, usdt, usdeAmount);
    const [packet] = parseEventLogs({ abi: LocalMessenger.abi, logs: receipt.logs, eventName: 'PacketSent' });
    const composeMsg = encodeAbiParameters(
      [{ type: 'address' }, { type: 'bytes16' }],
      [session.merchant, session.sessionId],
    );
    expect(packet!.args).toEqual({
      nonce: packet!.args.nonce,
      srcChainId: BigInt(LAYER2_CHAIN),
      dstChainId: BigInt(SETTLEMENT_CHAIN),
      from: session.forwarder,
      to: stakingComposer,
      amount: usdeAmount,
      composeMsg,
    });
    expect(flushed).toEqual({
      token: usdt,
      amountIn,
      usdeAmount,
      bridged: true,
      sharesOrNonce: packet!.args.nonce,
    });
    expect(await balanceOf(l2, usde, messenger)).toBe(lockedBefore + usdeAmount);
    expect(await balanceOf(l2, usde, session.forwarder)).toBe(0n);

    await waitForDelivery(LAYER2_CHAIN, packet!.args.nonce);
    expect(await balanceOf(l1, l1.contracts.susde, session.merchant)).toBe(shares);
    const composed = await l1.publicClient.getContractEvents({
      address: l1.contracts.stakingComposer,
      abi: StakingComposer.abi,
      eventName: 'Composed',
      args: { sessionId: session.sessionId },
      fromBlock: 0n,
    });
    expect(composed.map((log) => log.args)).toEqual([
      {
        sessionId: session.sessionId,
        merchant: session.merchant,
        srcChainId: BigInt(LAYER2_CHAIN),
        nonce: packet!.args.nonce,
        usdeAmount,
        shares,
      },
    ]);

    // A second delivery of the same packet is refused, even from the relayer itself...
    await expectRevert(
      l1,
      'relayer',
      {
        address: l1.contracts.messenger,
        abi: LocalMessenger.abi,
        functionName: 'deliver',
        args: [BigInt(LAYER2_CHAIN), packet!.args.nonce, stakingComposer, usdeAmount, composeMsg],
      },
      'AlreadyDelivered',
    );
    // ...and a relayer restarted from before the packet sees it again but skips it.
    await relayer.stop();
    const stateFile = join(stateDir, 'rescan.json');
    const l1Head = await l1.publicClient.getBlockNumber();
    writeFileSync(
      stateFile,
      JSON.stringify({
        cursors: { [LAYER2_CHAIN]: String(receipt.blockNumber), [SETTLEMENT_CHAIN]: String(l1Head) },
        pending: [],
      }),
    );
    relayer = await startRelayer({
      chains: relayerChains(),
      relayerPrivateKey: LOCAL_RELAYER.privateKey,
      pollIntervalMs: 100,
      stateFile,
      logger: silentLogger,
    });
    await waitForState(
      stateFile,
      (state) => BigInt(state.cursors[LAYER2_CHAIN]!) > receipt.blockNumber && state.pending.length === 0,
    );
    expect(await deliveriesOf(packet!.args.nonce)).toHaveLength(1);
    expect(await balanceOf(l1, l1.contracts.susde, session.merchant)).toBe(shares);
  });

  it('a relayer that was down delivers the packets sent meanwhile from its saved cursor', async () => {
    const stateFile = join(stateDir, 'restart.json');
    relayer = await startRelayer({
      chains: relayerChains(),
      relayerPrivateKey: LOCAL_RELAYER.privateKey,
      pollIntervalMs: 100,
      stateFile,
      logger: silentLogger,
    });
    await relayer.stop();
    relayer = undefined;

    const { usdc } = l2.contracts;
    const session = await newSession(l2);
    await pay(l2, usdc, session.forwarder, 42_000_000n);
    await deployForwarder(l2, session);
    const usdeAmount = 42n * 10n ** 18n;
    const shares = await previewDeposit(l1, usdeAmount);
    const { flushed } = await flush(l2, session.forwarder, usdc, usdeAmount);
    expect(flushed.bridged).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await deliveriesOf(flushed.sharesOrNonce)).toHaveLength(0);

    relayer = await startRelayer({
      chains: relayerChains(),
      relayerPrivateKey: LOCAL_RELAYER.privateKey,
      pollIntervalMs: 100,
      stateFile,
      logger: silentLogger,
    });
    await waitForDelivery(LAYER2_CHAIN, flushed.sharesOrNonce);
    expect(await balanceOf(l1, l1.contracts.susde, session.merchant)).toBe(shares);
    expect(await deliveriesOf(flushed.sharesOrNonce)).toHaveLength(1);
  });
});

describe('the relayer', () => {
  it('logs a packet it cannot deliver, keeps it pending and goes on delivering the next ones', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const chainsToRelay = [l1, l2].map(({ chainId, rpcUrl, contracts }) => ({
      chainId,
      rpcUrl,
      messenger: contracts.messenger,
    }));
    const relayer = await startRelayer({
      chains: chainsToRelay,
      relayerPrivateKey: LOCAL_RELAYER.privateKey,
      pollIntervalMs: 100,
      logger,
    });
    try {
      const { usde, messenger } = l2.contracts;
      // A packet whose compose step can never run: an externally owned receiver with a compose message.
      await pay(l2, usde, ACCOUNTS.payer.address, 3n);
      await send(l2, 'payer', {
        address: usde,
        abi: TestStablecoin.abi,
        functionName: 'approve',
        args: [messenger, 3n],
      });
      const poison = await send(l2, 'payer', {
        address: messenger,
        abi: LocalMessenger.abi,
        functionName: 'send',
        args: [BigInt(SETTLEMENT_CHAIN), ACCOUNTS.attacker.address, 3n, '0x01', ACCOUNTS.payer.address],
      });
      const [poisonPacket] = parseEventLogs({
        abi: LocalMessenger.abi,
        logs: poison.logs,
        eventName: 'PacketSent',
      });

      const session = await newSession(l2);
      await pay(l2, l2.contracts.usdc, session.forwarder, 9_000_000n);
      await deployForwarder(l2, session);
      const shares = await previewDeposit(l1, 9n * 10n ** 18n);
      const { flushed } = await flush(l2, session.forwarder, l2.contracts.usdc, 0n);
      expect(flushed.sharesOrNonce).toBe(poisonPacket!.args.nonce + 1n);

      const deadline = Date.now() + 20_000;
      while (!(await balanceOf(l1, l1.contracts.susde, session.merchant)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await balanceOf(l1, l1.contracts.susde, session.merchant)).toBe(shares);
      expect(
        await l1.publicClient.readContract({
          address: l1.contracts.messenger,
          abi: LocalMessenger.abi,
          functionName: 'delivered',
          args: [BigInt(LAYER2_CHAIN), poisonPacket!.args.nonce],
        }),
      ).toBe(false);
      const failures = lines
        .map((line) => JSON.parse(line) as { level: number; msg: string; nonce?: string })
        .filter((entry) => entry.level >= 50 && entry.nonce === String(poisonPacket!.args.nonce));
      expect(failures.length).toBeGreaterThan(0);
      expect(failures[0]!.msg).toMatch(/delivering a packet failed/);
    } finally {
      await relayer.stop();
    }
  });
});

interface StoredRelayerState {
  cursors: Record<string, string>;
  pending: unknown[];
}

async function waitForState(
  file: string,
  done: (state: StoredRelayerState) => boolean,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const state = JSON.parse(readFileSync(file, 'utf8')) as StoredRelayerState;
    if (done(state)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`relayer state ${file} did not reach the expected point within ${timeoutMs} ms`);
}
