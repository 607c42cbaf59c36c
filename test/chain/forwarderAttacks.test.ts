import {
  type Abi,
  type Address,
  type Hex,
  BaseError,
  ContractFunctionRevertedError,
  concat,
  encodeAbiParameters,
  getAddress,
  parseUnits,
  toFunctionSelector,
} from 'viem';
import {
  Forwarder,
  ForwarderFactory,
  LocalMessenger,
  LocalSwapRouter,
  RedirectingToken,
  ReentrantOperatorToken,
  StakingComposer,
} from '../../contracts/artifacts';
import { readForwarderSettlement } from '../../chain/forwarderFactory';
import { parRateE18 } from '../../dev/chains/localSettlement';
import {
  ACCOUNTS,
  type Actor,
  LAYER2_CHAIN,
  SETTLEMENT_CHAIN,
  type SettlementChain,
  type SettlementChains,
  balanceOf,
  deployForwarder,
  expectRevert,
  flush,
  freshAddress,
  newSession,
  pay,
  previewDeposit,
  send,
  startSettlementChains,
} from './settlementFixture';

/**
 * Every way we could think of to move a forwarder's funds anywhere but its merchant, or to settle them
 * on somebody else's terms. Each attempt must revert; the funds stay put or reach only the merchant.
 * The one other path, a refund to where the merchant signed, is attacked in forwarderRefunds.test.ts.
 */

const TOKEN_PAR = parRateE18({ decimalsIn: 6, decimalsOut: 18 });

let chains: SettlementChains;
let l1: SettlementChain;
let l2: SettlementChain;

// Two anvils and a full contract deployment each: it can take minutes when the run is loaded.
beforeAll(async () => {
  chains = await startSettlementChains([SETTLEMENT_CHAIN, LAYER2_CHAIN]);
  l1 = chains.chain(SETTLEMENT_CHAIN);
  l2 = chains.chain(LAYER2_CHAIN);
}, 240_000);

afterAll(async () => {
  await chains?.stop();
});

async function deployFixture(
  chain: SettlementChain,
  actor: Actor,
  artifact: { abi: Abi; bytecode: Hex },
  args: unknown[] = [],
): Promise<Address> {
  const wallet = chain.wallet(actor);
  const hash = await wallet.deployContract({
    abi: artifact.abi,
    bytecode: artifact.bytecode,
    args,
    account: wallet.account,
    chain: wallet.chain,
  });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  if (!receipt.contractAddress) throw new Error('fixture deployment failed');
  return getAddress(receipt.contractAddress);
}

/** A funded, deployed USDC forwarder of a fresh merchant on the settlement chain. */
async function fundedForwarder(amount = 10_000_000n) {
  const session = await newSession(l1);
  await pay(l1, l1.contracts.usdc, session.forwarder, amount);
  await deployForwarder(l1, session);
  return { ...session, amount };
}

describe('who may flush', () => {
  it('anyone but the operator is refused, the factory owner included, and the funds stay', async () => {
    const session = await fundedForwarder();
    const call = {
      address: session.forwarder,
      abi: Forwarder.abi,
      functionName: 'flush',
      args: [l1.contracts.usdc, 0n],
    } as const;
    for (const actor of ['attacker', 'owner', 'payer', 'relayer'] as const) {
      await expectRevert(l1, actor, call, 'NotOperator');
    }
    expect(await balanceOf(l1, l1.contracts.usdc, session.forwarder)).toBe(session.amount);
    expect(await balanceOf(l1, l1.contracts.susde, session.merchant)).toBe(0n);
  });

  it('on the settlement chain a flush carries no native value (there is no bridge fee to pay), and the funds stay', async () => {
    const session = await fundedForwarder();
    const operator = l1.wallet('operator');
    const simulated = await l1.publicClient
      .simulateContract({
        account: operator.account,
        address: session.forwarder,
        abi: Forwarder.abi,
        functionName: 'flush',
        args: [l1.contracts.usdc, 0n],
        value: 1n,
      })
      .catch((error: unknown) => error);
    expect(simulated).toBeInstanceOf(BaseError);
    const reverted = (simulated as BaseError).walk((cause) => cause instanceof ContractFunctionRevertedError);
    expect((reverted as ContractFunctionRevertedError).data?.errorName).toBe('UnexpectedValue');
    expect(
      await l1.publicClient.readContract({
        address: session.forwarder,
        abi: Forwarder.abi,
        functionName: 'bridgeFee',
        args: [10n ** 18n],
      }),
    ).toBe(0n);
    expect(await balanceOf(l1, l1.contracts.usdc, session.forwarder)).toBe(session.amount);
  });

  it('the implementation cannot be flushed, even by the operator, and holds no merchant', async () => {
    const { forwarderImplementation, usdc } = l1.contracts;
    await pay(l1, usdc, forwarderImplementation, 3_000_000n);
    await expectRevert(
      l1,
      'operator',
      { address: forwarderImplementation, abi: Forwarder.abi, functionName: 'flush', args: [usdc, 0n] },
      'NotAClone',
    );
    expect(await balanceOf(l1, usdc, forwarderImplementation)).toBe(3_000_000n);
    await expect(
      l1.publicClient.readContract({
        address: forwarderImplementation,
        abi: Forwarder.abi,
        functionName: 'merchant',
      }),
    ).rejects.toThrow(/NotAClone/);
  });

  it('only the owner may change the settlement configuration (so the operator or router cannot be swapped)', async () => {
    const { forwarderFactory } = l1.contracts;
    const before = await readForwarderSettlement(l1.publicClient, { forwarderFactory });
    const hijacked = {
      ...before,
      operator: ACCOUNTS.attacker.address,
      swapRouter: ACCOUNTS.attacker.address,
    };
    for (const actor of ['attacker', 'operator'] as const) {
      await expectRevert(
        l1,
        actor,
        {
          address: forwarderFactory,
          abi: ForwarderFactory.abi,
          functionName: 'setSettlement',
          args: [hijacked],
        },
        'OwnableUnauthorizedAccount',
      );
    }
    await expectRevert(
      l1,
      'attacker',
      {
        address: forwarderFactory,
        abi: ForwarderFactory.abi,
        functionName: 'transferOwnership',
        args: [ACCOUNTS.attacker.address],
      },
      'OwnableUnauthorizedAccount',
    );
    await expectRevert(
      l1,
      'attacker',
      {
        address: l1.contracts.swapRouter,
        abi: LocalSwapRouter.abi,
        functionName: 'setRate',
        args: [l1.contracts.usdc, l1.contracts.usde, 10n ** 40n],
      },
      'OwnableUnauthorizedAccount',
    );
    expect(await readForwarderSettlement(l1.publicClient, { forwarderFactory })).toEqual(before);
  });

  it('the owner cannot set a configuration that cannot work', async () => {
    const { forwarderFactory, usdc } = l1.contracts;
    const current = await readForwarderSettlement(l1.publicClient, { forwarderFactory });
    const invalid = [
      { ...current, maxSlippageBps: 10_001 },
      { ...current, operator: '0x0000000000000000000000000000000000000000' as Address },
      { ...current, usde: usdc }, // the vault holds USDe, not USDC
    ];
    for (const config of invalid) {
      await expectRevert(
        l1,
        'owner',
        {
          address: forwarderFactory,
          abi: ForwarderFactory.abi,
          functionName: 'setSettlement',
          args: [config],
        },
        'InvalidSettlement',
      );
    }
    expect(await readForwarderSettlement(l1.publicClient, { forwarderFactory })).toEqual(current);
  });
});

describe('binding to the merchant', () => {
  it('deploying the session with another merchant gives another address; the funded one still pays only its merchant', async () => {
    const session = await newSession(l1);
    await pay(l1, l1.contracts.usdc, session.forwarder, 7_000_000n);
    const hijackForwarder = await l1.publicClient.readContract({
      address: l1.contracts.forwarderFactory,
      abi: ForwarderFactory.abi,
      functionName: 'predict',
      args: [session.sessionId, ACCOUNTS.attacker.address],
    });
    expect(hijackForwarder).not.toBe(session.forwarder);
    await deployForwarder(l1, {
      sessionId: session.sessionId,
      merchant: ACCOUNTS.attacker.address,
      forwarder: hijackForwarder,
    });
    await expectRevert(
      l1,
      'operator',
      { address: hijackForwarder, abi: Forwarder.abi, functionName: 'flush', args: [l1.contracts.usdc, 0n] },
      'NothingToFlush',
    );
    expect(await balanceOf(l1, l1.contracts.usdc, session.forwarder)).toBe(7_000_000n);

    await deployForwarder(l1, session);
    // Deploying again changes nothing at the address.
    await deployForwarder(l1, session);
    expect(
      await l1.publicClient.readContract({
        address: session.forwarder,
        abi: Forwarder.abi,
        functionName: 'merchant',
      }),
    ).toBe(session.merchant);
    const shares = await previewDeposit(l1, 7n * 10n ** 18n);
    await flush(l1, session.forwarder, l1.contracts.usdc, 0n);
    expect(await balanceOf(l1, l1.contracts.susde, session.merchant)).toBe(shares);
    expect(await balanceOf(l1, l1.contracts.susde, ACCOUNTS.attacker.address)).toBe(0n);
  });

  it('a clone has no initialiser or fallback to re-bind it: any other call reverts', async () => {
    const session = await fundedForwarder();
    const wallet = l1.wallet('attacker');
    for (const signature of ['initialize(address)', 'init(address,bytes16)', 'setMerchant(address)']) {
      const data = concat([
        toFunctionSelector(signature),
        encodeAbiParameters([{ type: 'address' }], [ACCOUNTS.attacker.address]),
      ]);
      await expect(
        l1.publicClient.call({ account: wallet.account, to: session.forwarder, data }),
      ).rejects.toThrow();
      const hash = await wallet.sendTransaction({ to: session.forwarder, data, gas: 200_000n });
      expect((await l1.publicClient.waitForTransactionReceipt({ hash })).status).toBe('reverted');
    }
    const payable = await wallet.sendTransaction({ to: session.forwarder, value: 1n, gas: 100_000n });
    expect((await l1.publicClient.waitForTransactionReceipt({ hash: payable })).status).toBe('reverted');
    expect(
      await l1.publicClient.readContract({
        address: session.forwarder,
        abi: Forwarder.abi,
        functionName: 'merchant',
      }),
    ).toBe(session.merchant);
  });
});

describe('malicious tokens', () => {
  it('a token that is also the operator and re-enters flush during the swap meets the reentrancy guard', async () => {
    const { usde, susde, swapRouter } = l1.contracts;
    const token = await deployFixture(l1, 'attacker', ReentrantOperatorToken);
    // A factory of its own, where the token contract is the operator, so only the guard stands in the way.
    const factory = await deployFixture(l1, 'owner', ForwarderFactory, [ACCOUNTS.owner.address]);
    const settlement = await readForwarderSettlement(l1.publicClient, {
      forwarderFactory: l1.contracts.forwarderFactory,
    });
    await send(l1, 'owner', {
      address: factory,
      abi: ForwarderFactory.abi,
      functionName: 'setSettlement',
      args: [{ ...settlement, operator: token }],
    });
    await send(l1, 'owner', {
      address: swapRouter,
      abi: LocalSwapRouter.abi,
      functionName: 'setRate',
      args: [token, usde, TOKEN_PAR],
    });

    const session = await newSession(l1, { factory });
    await send(l1, 'attacker', {
      address: token,
      abi: ReentrantOperatorToken.abi,
      functionName: 'mint',
      args: [session.forwarder, 20_000_000n],
    });
    await pay(l1, usde, session.forwarder, parseUnits('5', 18));
    await deployForwarder(l1, session, factory);
    await send(l1, 'attacker', {
      address: token,
      abi: ReentrantOperatorToken.abi,
      functionName: 'arm',
      args: [session.forwarder, usde],
    });

    await expectRevert(
      l1,
      'attacker',
      {
        address: token,
        abi: [...ReentrantOperatorToken.abi, ...Forwarder.abi],
        functionName: 'flushAsOperator',
        args: [session.forwarder, token, 0n],
      },
      'ReentrancyGuardReentrantCall',
    );
    expect(await balanceOf(l1, token, session.forwarder)).toBe(20_000_000n);
    expect(await balanceOf(l1, usde, session.forwarder)).toBe(parseUnits('5', 18));
    expect(await balanceOf(l1, susde, session.merchant)).toBe(0n);

    // Disarmed, the same flush goes through: the guard was the only thing in the way, and the merchant is paid.
    await send(l1, 'attacker', {
      address: token,
      abi: ReentrantOperatorToken.abi,
      functionName: 'arm',
      args: ['0x0000000000000000000000000000000000000000', usde],
    });
    const shares = await previewDeposit(l1, 20n * 10n ** 18n);
    await send(l1, 'attacker', {
      address: token,
      abi: ReentrantOperatorToken.abi,
      functionName: 'flushAsOperator',
      args: [session.forwarder, token, 0n],
    });
    expect(await balanceOf(l1, susde, session.merchant)).toBe(shares);
    expect(await balanceOf(l1, usde, session.forwarder)).toBe(parseUnits('5', 18));
  });

  it('a token whose transferFrom tries to divert the forwarder’s USDe gets nothing; the merchant gets everything', async () => {
    const { usde, susde, swapRouter } = l1.contracts;
    const thief = freshAddress();
    const token = await deployFixture(l1, 'attacker', RedirectingToken, [usde, thief]);
    await send(l1, 'owner', {
      address: swapRouter,
      abi: LocalSwapRouter.abi,
      functionName: 'setRate',
      args: [token, usde, TOKEN_PAR],
    });
    const session = await newSession(l1);
    const held = parseUnits('40', 18);
    await send(l1, 'attacker', {
      address: token,
      abi: RedirectingToken.abi,
      functionName: 'mint',
      args: [session.forwarder, 100_000_000n],
    });
    await pay(l1, usde, session.forwarder, held);
    await deployForwarder(l1, session);

    const swappedShares = await previewDeposit(l1, 100n * 10n ** 18n);
    const { flushed } = await flush(l1, session.forwarder, token, 0n);
    expect(flushed).toEqual({
      token,
      amountIn: 100_000_000n,
      usdeAmount: 100n * 10n ** 18n,
      bridged: false,
      sharesOrNonce: swappedShares,
    });
    const read = (functionName: 'failedAttempts' | 'succeededAttempts') =>
      l1.publicClient.readContract({ address: token, abi: RedirectingToken.abi, functionName });
    expect(await read('failedAttempts')).toBe(2n);
    expect(await read('succeededAttempts')).toBe(0n);
    expect(await balanceOf(l1, usde, thief)).toBe(0n);
    expect(await balanceOf(l1, usde, session.forwarder)).toBe(held);
    expect(await balanceOf(l1, susde, session.merchant)).toBe(swappedShares);

    const heldShares = await previewDeposit(l1, held);
    await flush(l1, session.forwarder, usde, held);
    expect(await balanceOf(l1, susde, session.merchant)).toBe(swappedShares + heldShares);
    expect(await balanceOf(l1, susde, thief)).toBe(0n);
  });
});

describe('slippage an operator cannot waive', () => {
  it('a minimum of zero still cannot settle further below par than maxSlippageBps', async () => {
    const { usdc, swapRouter, usde } = l1.contracts;
    const session = await fundedForwarder(100_000_000n);
    const sandwiched = (TOKEN_PAR * 9_900n) / 10_000n; // 1 % below par; the factory allows 0.5 %
    await send(l1, 'owner', {
      address: swapRouter,
      abi: LocalSwapRouter.abi,
      functionName: 'setRate',
      args: [usdc, usde, sandwiched],
    });
    try {
      const floor = (100n * 10n ** 18n * 9_950n) / 10_000n;
      await expectRevert(
        l1,
        'operator',
        { address: session.forwarder, abi: Forwarder.abi, functionName: 'flush', args: [usdc, 0n] },
        'InsufficientOutput',
        [99n * 10n ** 18n, floor],
      );
      expect(await balanceOf(l1, usdc, session.forwarder)).toBe(100_000_000n);
    } finally {
      await send(l1, 'owner', {
        address: swapRouter,
        abi: LocalSwapRouter.abi,
        functionName: 'setRate',
        args: [usdc, usde, TOKEN_PAR],
      });
    }
  });
});

describe('the bridge', () => {
  const composeFor = (merchant: Address) =>
    encodeAbiParameters(
      [{ type: 'address' }, { type: 'bytes16' }],
      [merchant, '0x3f2504e04f8941d39a0c0305e82c3301'],
    );

  it('only the relayer may deliver a packet (nobody mints USDe by claiming one)', async () => {
    const { messenger, usde, stakingComposer } = l1.contracts;
    await expectRevert(
      l1,
      'attacker',
      {
        address: messenger,
        abi: LocalMessenger.abi,
        functionName: 'deliver',
        args: [BigInt(LAYER2_CHAIN), 999n, ACCOUNTS.attacker.address, parseUnits('1000000', 18), '0x'],
      },
      'NotRelayer',
    );
    await expectRevert(
      l1,
      'operator',
      {
        address: messenger,
        abi: LocalMessenger.abi,
        functionName: 'deliver',
        args: [
          BigInt(LAYER2_CHAIN),
          998n,
          stakingComposer,
          parseUnits('1000', 18),
          composeFor(ACCOUNTS.attacker.address),
        ],
      },
      'NotRelayer',
    );
    expect(await balanceOf(l1, usde, ACCOUNTS.attacker.address)).toBe(0n);
    expect(
      await l1.publicClient.readContract({
        address: messenger,
        abi: LocalMessenger.abi,
        functionName: 'delivered',
        args: [BigInt(LAYER2_CHAIN), 999n],
      }),
    ).toBe(false);
  });

  it('only the messenger may make the composer stake (USDe left at the composer cannot be claimed)', async () => {
    const { stakingComposer, usde, susde } = l1.contracts;
    await pay(l1, usde, stakingComposer, parseUnits('5', 18));
    for (const actor of ['attacker', 'relayer', 'operator'] as const) {
      await expectRevert(
        l1,
        actor,
        {
          address: stakingComposer,
          abi: StakingComposer.abi,
          functionName: 'compose',
          args: [BigInt(LAYER2_CHAIN), 1n, parseUnits('5', 18), composeFor(ACCOUNTS.attacker.address)],
        },
        'NotMessenger',
      );
    }
    expect(await balanceOf(l1, usde, stakingComposer)).toBe(parseUnits('5', 18));
    expect(await balanceOf(l1, susde, ACCOUNTS.attacker.address)).toBe(0n);
  });

  it('a layer-2 forwarder sends only to the configured composer, with its own merchant in the message', async () => {
    const { usdc, messenger, usde } = l2.contracts;
    const session = await newSession(l2);
    await pay(l2, usdc, session.forwarder, 2_000_000n);
    await deployForwarder(l2, session);
    await expectRevert(
      l2,
      'attacker',
      { address: session.forwarder, abi: Forwarder.abi, functionName: 'flush', args: [usdc, 0n] },
      'NotOperator',
    );
    const lockedBefore = await balanceOf(l2, usde, messenger);
    const { receipt } = await flush(l2, session.forwarder, usdc, 0n);
    const sent = await l2.publicClient.getContractEvents({
      address: messenger,
      abi: LocalMessenger.abi,
      eventName: 'PacketSent',
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.args.to).toBe(l2.contracts.stakingComposer);
    expect(sent[0]!.args.composeMsg).toBe(
      encodeAbiParameters([{ type: 'address' }, { type: 'bytes16' }], [session.merchant, session.sessionId]),
    );
    expect(await balanceOf(l2, usde, messenger)).toBe(lockedBefore + 2n * 10n ** 18n);
  });
});
