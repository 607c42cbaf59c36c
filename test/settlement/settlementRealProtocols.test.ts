import { erc20Abi, getAddress, parseAbi, parseEventLogs, parseUnits, type Address, type Hex } from 'viem';
import { layerZeroEndpointAbi, COMPOSE_EMPTY, COMPOSE_RECEIVED } from '../../chain/layerZero';
import {
  Forwarder,
  LayerZeroStakingComposer,
  LocalStakedUSDeV2,
  LocalUSDeOFT,
} from '../../contracts/artifacts';
import { LOCAL_LAYER_ZERO_FEE } from '../../dev/protocols/layerZero';
import { LOCAL_POOL_FEE } from '../../dev/protocols/uniswapV3';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import {
  payDeposit,
  startSettlementStack,
  statusesRecorded,
  testChainClient,
  type SettlementStack,
} from './settlementStack';

/**
 * The settlement pipeline's core paths on local chains that carry the real protocols instead of our stand-ins:
 * Uniswap v3 (factory, position manager and SwapRouter02 from their npm bytecode, pools seeded at par),
 * LayerZero's EndpointV2 with USDe as an OFT (lockbox adapter on the settlement chain, OFT on the layer-2) and
 * an ERC-4626 sUSDe with Ethena's cooldown — with the real worker, deposit monitors and the dev relayer
 * delivering packets and composes through the endpoint. The same paths against the stand-ins are in
 * settlement.test.ts.
 */
const ETHEREUM_SEPOLIA = 11155111;
const BASE_SEPOLIA = 84532;
const CONFIRMATIONS = 3;

const uniswapFactoryAbi = parseAbi(['function getPool(address, address, uint24) view returns (address)']);
const swapRouter02Abi = parseAbi([
  'function exactInputSingle((address tokenIn, address tokenOut, uint24 fee, address recipient, uint256 amountIn, uint256 amountOutMinimum, uint160 sqrtPriceLimitX96) params) payable returns (uint256 amountOut)',
]);

describe('settlement on the real protocols (Uniswap v3, LayerZero OFT with compose, ERC-4626 sUSDe)', () => {
  let stack: SettlementStack;
  beforeAll(async () => {
    stack = await startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA, BASE_SEPOLIA], protocols: 'real' });
  }, 180_000);
  afterAll(() => stack?.stop());

  const owner = (chainId: number) =>
    testChainClient(stack.rpcUrls[chainId]!, chainId, ANVIL_DEV_ACCOUNTS[0].privateKey);

  async function createSession(json: object) {
    const created = await stack.app.request('/v1/sessions', {
      method: 'POST',
      headers: stack.sk,
      json: { sandboxMode: true, ...json },
    });
    expect(created.status).toBe(201);
    const read = await stack.app.request(`/v1/sessions/${created.body.id}`);
    return read.body as {
      id: string;
      paymentOptions: Array<{
        chainId: number;
        symbol: string;
        tokenAddress: Address;
        depositAddress: Address;
        amount: string;
      }>;
    };
  }

  async function pay(sessionId: string, chainId: number, symbol: string) {
    const session = await createSessionCache.get(sessionId)!;
    const option = session.paymentOptions.find(
      (entry) => entry.chainId === chainId && entry.symbol === symbol,
    )!;
    await payDeposit(stack.chain(chainId), {
      token: option.tokenAddress,
      to: option.depositAddress,
      amount: BigInt(option.amount),
    });
    await stack.chain(chainId).mine({ blocks: CONFIRMATIONS + 1 });
    return option;
  }
  const createSessionCache = new Map<string, Awaited<ReturnType<typeof createSession>>>();
  async function newSession(json: object) {
    const session = await createSession(json);
    createSessionCache.set(session.id, session);
    return session;
  }

  async function waitForStatus(sessionId: string, wanted: string[], timeoutMs = 90_000): Promise<string[]> {
    const seen: string[] = [];
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const status = (await stack.app.request(`/v1/sessions/${sessionId}/status`)).body.status as string;
      if (seen.at(-1) !== status) seen.push(status);
      if (wanted.includes(status)) return seen;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`session ${sessionId} went through ${seen.join(' → ')}, never ${wanted.join('/')}`);
  }

  async function flushOf(sessionId: string, chainId: number) {
    const row = await stack.db
      .selectFrom('settlements')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('chain_id', '=', chainId)
      .executeTakeFirstOrThrow();
    const receipt = await stack.chain(chainId).getTransactionReceipt({ hash: row.flush_tx_hash as Hex });
    const [flushed] = parseEventLogs({ abi: Forwarder.abi, eventName: 'Flushed', logs: receipt.logs });
    return { row, receipt, flushed: flushed!.args };
  }

  const balanceOf = (chainId: number, token: Address, holder: Address, blockNumber?: bigint) =>
    stack.chain(chainId).readContract({
      address: token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [holder],
      blockNumber,
    });

  /** The USDe the Uniswap pool paid out in a transaction: its Transfer of USDe from the pool. */
  async function swappedOut(
    chainId: number,
    receiptLogs: Parameters<typeof parseEventLogs>[0]['logs'],
    tokenIn: Address,
  ) {
    const contracts = stack.contracts(chainId);
    const pool = await stack.chain(chainId).readContract({
      address: contracts.uniswapV3Factory!,
      abi: uniswapFactoryAbi,
      functionName: 'getPool',
      args: [tokenIn, contracts.usde!, LOCAL_POOL_FEE],
    });
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receiptLogs });
    const out = transfers.filter(
      (log) =>
        getAddress(log.address) === getAddress(contracts.usde!) &&
        getAddress(log.args.from) === getAddress(pool),
    );
    const into = transfers.filter(
      (log) =>
        getAddress(log.address) === getAddress(tokenIn) && getAddress(log.args.to) === getAddress(pool),
    );
    expect(out).toHaveLength(1);
    expect(into).toHaveLength(1);
    return { pool, usdeOut: out[0]!.args.value, tokenIn: into[0]!.args.value };
  }

  it('USDC on Ethereum Sepolia is swapped through the Uniswap v3 pool and staked for the merchant: exactly previewDeposit of what the pool paid', async () => {
    const session = await newSession({ amount: '100.25', paymentOptionSymbols: ['USDC'] });
    const merchant = getAddress(stack.merchant.account.address);
    const susde = stack.contracts(ETHEREUM_SEPOLIA).susde!;
    const before = await balanceOf(ETHEREUM_SEPOLIA, susde, merchant);
    const option = await pay(session.id, ETHEREUM_SEPOLIA, 'USDC');
    await waitForStatus(session.id, ['completed']);

    const { flushed, receipt, row } = await flushOf(session.id, ETHEREUM_SEPOLIA);
    const swap = await swappedOut(ETHEREUM_SEPOLIA, receipt.logs, option.tokenAddress);
    expect(swap.tokenIn).toBe(BigInt(option.amount));
    expect(flushed.usdeAmount).toBe(swap.usdeOut);
    // Near par (0.05 % pool fee), never below the 0.5 % floor.
    expect(flushed.usdeAmount).toBeLessThan(100_250_000_000_000_000_000n);
    expect(flushed.usdeAmount).toBeGreaterThanOrEqual((100_250_000_000_000_000_000n * 9950n) / 10_000n);
    const expectedShares = await stack.chain(ETHEREUM_SEPOLIA).readContract({
      address: susde,
      abi: LocalStakedUSDeV2.abi,
      functionName: 'previewDeposit',
      args: [flushed.usdeAmount],
      blockNumber: receipt.blockNumber - 1n,
    });
    expect(expectedShares).toBeLessThan(flushed.usdeAmount); // one share is worth more than one USDe
    expect(flushed.sharesOrNonce).toBe(expectedShares);
    expect((await balanceOf(ETHEREUM_SEPOLIA, susde, merchant)) - before).toBe(expectedShares);
    expect(row.shares).toBe(expectedShares.toString());
  });

  it('USDC on Base Sepolia is swapped, bridged through the USDe OFT with a compose message, and staked into sUSDe for the merchant: exactly previewDeposit of the delivered USDe', async () => {
    const session = await newSession({ amount: '42', paymentOptionSymbols: ['USDC'] });
    const merchant = getAddress(stack.merchant.account.address);
    const base = stack.contracts(BASE_SEPOLIA);
    const sepolia = stack.contracts(ETHEREUM_SEPOLIA);
    const [susdeBefore, l2UsdeBefore] = await Promise.all([
      balanceOf(ETHEREUM_SEPOLIA, sepolia.susde!, merchant),
      balanceOf(BASE_SEPOLIA, base.usde!, merchant),
    ]);
    const option = await pay(session.id, BASE_SEPOLIA, 'USDC');
    await waitForStatus(session.id, ['completed']);
    const statuses = await statusesRecorded(stack.temporal, session.id);
    expect(statuses.indexOf('bridging')).toBeGreaterThan(statuses.indexOf('confirming'));
    expect(statuses.indexOf('bridging')).toBeLessThan(statuses.indexOf('completed'));

    const { flushed, receipt, row } = await flushOf(session.id, BASE_SEPOLIA);
    expect(flushed.bridged).toBe(true);
    const swap = await swappedOut(BASE_SEPOLIA, receipt.logs, option.tokenAddress);
    // The OFT carries 6 shared decimals: the rest of a unit went to the merchant on Base Sepolia.
    const [sent] = parseEventLogs({ abi: LocalUSDeOFT.abi, eventName: 'OFTSent', logs: receipt.logs });
    expect(sent!.args.amountSentLD).toBe(flushed.usdeAmount);
    expect(flushed.usdeAmount % 10n ** 12n).toBe(0n);
    expect(swap.usdeOut - flushed.usdeAmount).toBeLessThan(10n ** 12n);
    expect((await balanceOf(BASE_SEPOLIA, base.usde!, merchant)) - l2UsdeBefore).toBe(
      swap.usdeOut - flushed.usdeAmount,
    );
    expect(await balanceOf(BASE_SEPOLIA, base.usde!, option.depositAddress)).toBe(0n);
    // The operator paid the endpoint's quoted fee with the flush; the message library got exactly that.
    const libBalance = (blockNumber: bigint) =>
      stack.chain(BASE_SEPOLIA).getBalance({ address: base.layerZeroMessageLib!, blockNumber });
    expect((await libBalance(receipt.blockNumber)) - (await libBalance(receipt.blockNumber - 1n))).toBe(
      LOCAL_LAYER_ZERO_FEE,
    );

    // Delivered by the endpoint on Ethereum Sepolia and staked by lzCompose in the composer.
    const settlementChain = stack.chain(ETHEREUM_SEPOLIA);
    const [composed] = await settlementChain.getContractEvents({
      address: sepolia.stakingComposer!,
      abi: LayerZeroStakingComposer.abi,
      eventName: 'Composed',
      args: { guid: sent!.args.guid },
      fromBlock: 0n,
    });
    expect(composed!.args).toMatchObject({
      merchant,
      usdeAmount: flushed.usdeAmount,
      nonce: flushed.sharesOrNonce,
    });
    const expectedShares = await settlementChain.readContract({
      address: sepolia.susde!,
      abi: LocalStakedUSDeV2.abi,
      functionName: 'previewDeposit',
      args: [flushed.usdeAmount],
      blockNumber: composed!.blockNumber - 1n,
    });
    expect(composed!.args.shares).toBe(expectedShares);
    expect((await balanceOf(ETHEREUM_SEPOLIA, sepolia.susde!, merchant)) - susdeBefore).toBe(expectedShares);
    expect(row).toMatchObject({
      shares: expectedShares.toString(),
      delivered_usde: flushed.usdeAmount.toString(),
    });
    expect(await balanceOf(ETHEREUM_SEPOLIA, sepolia.usde!, sepolia.stakingComposer!)).toBe(0n);
  });

  it('a compose that reverts (the composer may not stake) leaves the USDe at the composer and the message queued; once staking is allowed again the worker re-runs it and the session completes with exact shares', async () => {
    const sepolia = stack.contracts(ETHEREUM_SEPOLIA);
    const admin = owner(ETHEREUM_SEPOLIA);
    const restrict = async (functionName: 'addToBlacklist' | 'removeFromBlacklist') => {
      const hash = await admin.writeContract({
        address: sepolia.susde!,
        abi: LocalStakedUSDeV2.abi,
        functionName,
        args: [sepolia.stakingComposer!, false],
      });
      await admin.waitForTransactionReceipt({ hash });
    };
    await restrict('addToBlacklist');
    try {
      const session = await newSession({ amount: '15', paymentOptionSymbols: ['USDC'] });
      const merchant = getAddress(stack.merchant.account.address);
      const susdeBefore = await balanceOf(ETHEREUM_SEPOLIA, sepolia.susde!, merchant);
      await pay(session.id, BASE_SEPOLIA, 'USDC');
      await waitForStatus(session.id, ['bridging']);
      const { flushed, receipt } = await flushOf(session.id, BASE_SEPOLIA);
      const [sent] = parseEventLogs({ abi: LocalUSDeOFT.abi, eventName: 'OFTSent', logs: receipt.logs });
      const guid = sent!.args.guid;

      // The relayer delivered the packet and tried the compose: it reverted and was alerted.
      const settlementChain = stack.chain(ETHEREUM_SEPOLIA);
      const deadline = Date.now() + 60_000;
      let alerts: unknown[] = [];
      while (alerts.length === 0 && Date.now() < deadline) {
        alerts = (
          await settlementChain.getContractEvents({
            address: sepolia.layerZeroEndpoint!,
            abi: parseAbi([
              'event LzComposeAlert(address indexed from, address indexed to, address indexed executor, bytes32 guid, uint16 index, uint256 gas, uint256 value, bytes message, bytes extraData, bytes reason)',
            ]),
            eventName: 'LzComposeAlert',
            fromBlock: 0n,
          })
        ).filter((log) => log.args.guid === guid);
        if (alerts.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(alerts).toHaveLength(1);
      const queued = await settlementChain.readContract({
        address: sepolia.layerZeroEndpoint!,
        abi: layerZeroEndpointAbi,
        functionName: 'composeQueue',
        args: [sepolia.usdeOft!, sepolia.stakingComposer!, guid, 0],
      });
      expect([COMPOSE_EMPTY, COMPOSE_RECEIVED]).not.toContain(queued);
      // Funds are safe and recoverable: the delivered USDe waits at the composer; the session is still bridging.
      expect(await balanceOf(ETHEREUM_SEPOLIA, sepolia.usde!, sepolia.stakingComposer!)).toBe(
        flushed.usdeAmount,
      );
      await new Promise((resolve) => setTimeout(resolve, 2_500)); // past the worker's retry delay: its retries fail too
      expect((await stack.app.request(`/v1/sessions/${session.id}/status`)).body.status).toBe('bridging');
      expect(await balanceOf(ETHEREUM_SEPOLIA, sepolia.susde!, merchant)).toBe(susdeBefore);

      await restrict('removeFromBlacklist');
      await waitForStatus(session.id, ['completed']);
      const [composed] = await settlementChain.getContractEvents({
        address: sepolia.stakingComposer!,
        abi: LayerZeroStakingComposer.abi,
        eventName: 'Composed',
        args: { guid },
        fromBlock: 0n,
      });
      const composeTx = await settlementChain.getTransaction({ hash: composed!.transactionHash! });
      // Re-run by the settlement operator, not by the relayer (which, like LayerZero's executor, does not retry).
      expect(getAddress(composeTx.from)).toBe(getAddress(stack.operator.address));
      const expectedShares = await settlementChain.readContract({
        address: sepolia.susde!,
        abi: LocalStakedUSDeV2.abi,
        functionName: 'previewDeposit',
        args: [flushed.usdeAmount],
        blockNumber: composed!.blockNumber - 1n,
      });
      expect(composed!.args.shares).toBe(expectedShares);
      expect((await balanceOf(ETHEREUM_SEPOLIA, sepolia.susde!, merchant)) - susdeBefore).toBe(
        expectedShares,
      );
      expect(await balanceOf(ETHEREUM_SEPOLIA, sepolia.usde!, sepolia.stakingComposer!)).toBe(0n);
    } finally {
      await restrict('removeFromBlacklist').catch(() => undefined);
    }
  }, 120_000);

  it('a pool pushed below the slippage floor fails the swap with Uniswap’s reason and leaves the funds; once the price is back, retry-forwarder completes the session', async () => {
    const contracts = stack.contracts(ETHEREUM_SEPOLIA);
    const trader = stack.chain(ETHEREUM_SEPOLIA);
    const swap = async (tokenIn: Address, tokenOut: Address, amountIn: bigint) => {
      for (const [functionName, args] of [
        ['mint', [trader.account.address, amountIn]],
        ['approve', [contracts.uniswapSwapRouter02!, amountIn]],
      ] as const) {
        const hash = await trader.writeContract({
          address: tokenIn,
          abi: LocalUSDeOFT.abi,
          functionName,
          args,
        } as never);
        expect((await trader.waitForTransactionReceipt({ hash })).status).toBe('success');
      }
      const hash = await trader.writeContract({
        address: contracts.uniswapSwapRouter02!,
        abi: swapRouter02Abi,
        functionName: 'exactInputSingle',
        // A fixed gas allowance, not an estimate: the swap crosses many ticks, and one CI run under load saw
        // it revert; an estimate taken at one block can fall short in the block the swap lands in.
        gas: 5_000_000n,
        args: [
          {
            tokenIn,
            tokenOut,
            fee: LOCAL_POOL_FEE,
            recipient: trader.account.address,
            amountIn,
            amountOutMinimum: 0n,
            sqrtPriceLimitX96: 0n,
          },
        ],
      });
      const receipt = await trader.waitForTransactionReceipt({ hash });
      expect(receipt.status).toBe('success');
      return parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }).find(
        (log) => getAddress(log.address) === getAddress(tokenOut),
      )!.args.value;
    };
    // Someone sells 2,000,000 USDT into the USDT/USDe pool: USDT is now worth far less than a USDe there.
    const bought = await swap(contracts.usdt!, contracts.usde!, parseUnits('2000000', 6));
    const session = await newSession({ amount: '10', paymentOptionSymbols: ['USDT'] });
    const option = await pay(session.id, ETHEREUM_SEPOLIA, 'USDT');
    await waitForStatus(session.id, ['failed']);
    const failed = await stack.app.request(`/v1/merchants/me/sessions/${session.id}`, {
      headers: stack.merchant.auth,
    });
    expect(failed.body.failureReason).toMatch(/Too little received/);
    expect(await balanceOf(ETHEREUM_SEPOLIA, option.tokenAddress, option.depositAddress)).toBe(
      BigInt(option.amount),
    );

    // The price comes back (the USDe is sold back for USDT); retry-forwarder settles near par.
    await swap(contracts.usde!, contracts.usdt!, bought);
    const retried = await stack.app.request(`/v1/merchants/me/sessions/${session.id}/retry-forwarder`, {
      method: 'POST',
      headers: stack.merchant.auth,
    });
    expect(retried.status).toBe(202);
    await waitForStatus(session.id, ['completed']);
    const { flushed } = await flushOf(session.id, ETHEREUM_SEPOLIA);
    expect(flushed.usdeAmount).toBeGreaterThanOrEqual((10n * 10n ** 18n * 9950n) / 10_000n);
  }, 120_000);
});
