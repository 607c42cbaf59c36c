import { redactProviderUrls } from '../chain/providerUrlRedaction';
import { ApplicationFailure, heartbeat, sleep } from '@temporalio/activity';
import {
  BaseError,
  ContractFunctionRevertedError,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  keccak256,
  parseEventLogs,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { sessionIdToBytes16 } from '../chain/depositAddress';
import {
  COMPOSE_EMPTY,
  COMPOSE_RECEIVED,
  layerZeroEndpointAbi,
  oappAbi,
  oftComposeMessage,
  packetGuid,
  settlementComposeMsg,
} from '../chain/layerZero';
import type { OperatorChains, OperatorClient } from '../chain/operatorChains';
import { findRecentEvent } from '../chain/recentEvents';
import { toMicroUsdRoundingDown } from '../chain/tokenAmount';
import {
  Forwarder,
  ForwarderFactory,
  LayerZeroSettlementMessenger,
  LayerZeroStakingComposer,
  LocalMessenger,
  StakingComposer,
} from '../contracts/artifacts';
import type { Db } from '../db/client';
import { isDepositSettled } from '../db/deposits';
import {
  discardFlush,
  findUnfinishedFlush,
  listSettlements,
  preparePendingSettlement,
  recordBridgeDelivered,
  recordFlushSettled,
  type SettlementRow,
} from '../db/settlements';
import { findPayoutAddress } from '../db/sessions';
import { awaitRecordedFlush, signAndRecordFlush } from './flushTransactions';

export interface SettlementActivityDependencies {
  db: Db;
  operator: OperatorChains;
  /** Slippage allowed against stablecoin parity when quoting `minUsdeOut`, in basis points. */
  slippageBps: number;
  /**
   * How long a LayerZero compose may sit queued (delivered, not staked) before the worker runs it itself with
   * the operator key; the network's executor normally runs it within seconds. Default 60 s.
   */
  composeRetryAfterMs?: number;
}

/** Headroom on the quoted bridge fee, in basis points: the quote can rise before the flush is mined; the endpoint refunds the surplus to the operator. */
export const BRIDGE_FEE_MARGIN_BPS = 2_000n;

/** Failure types the session workflow branches on. */
export const SETTLEMENT_REVERTED = 'SettlementReverted';
export const DEPOSIT_MISSING = 'DepositMissing';

export interface FlushOutcome {
  txHash: Hex;
  amountIn: string;
  usdeAmount: string;
  bridged: boolean;
  /** sUSDe shares minted to the merchant (settlement chain) or the bridge message nonce (layer-2). */
  sharesOrNonce: string;
  settlementChainId: number;
}

const USDE_DECIMALS = 18;

/** USDe base units the stablecoin amount is worth at parity, less the allowed slippage (rounded down). */
export function quoteMinUsdeOut(amountIn: bigint, tokenDecimals: number, slippageBps: number): bigint {
  const atParity =
    tokenDecimals <= USDE_DECIMALS
      ? amountIn * 10n ** BigInt(USDE_DECIMALS - tokenDecimals)
      : amountIn / 10n ** BigInt(tokenDecimals - USDE_DECIMALS);
  return (atParity * BigInt(10_000 - slippageBps)) / 10_000n;
}

/**
 * The revert as a readable reason: the custom error with its arguments, or viem's short message. It
 * becomes the session's failureReason, so no provider URL survives in it.
 */
function revertReason(error: unknown): string {
  return redactProviderUrls(unredactedRevertReason(error));
}

function unredactedRevertReason(error: unknown): string {
  if (error instanceof BaseError) {
    const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
      const args = (reverted.data.args ?? []).map((arg) => String(arg)).join(', ');
      return `${reverted.data.errorName}(${args})`;
    }
    return error.shortMessage;
  }
  return error instanceof Error ? error.message : String(error);
}

function isRevert(error: unknown): boolean {
  return (
    error instanceof BaseError &&
    error.walk((cause) => cause instanceof ContractFunctionRevertedError) !== null
  );
}

/** How often a chain step tells Temporal its worker is alive (the workflow's heartbeat timeout is 20 s). */
const HEARTBEAT_EVERY_MS = 5_000;

/**
 * Runs a chain step while heartbeating: a worker that dies mid-step (crash, SIGKILL, lost host) is
 * noticed at the heartbeat timeout, so another worker retries the idempotent step within seconds
 * instead of after the 5-minute start-to-close timeout.
 */
async function heartbeating<T>(step: () => Promise<T>): Promise<T> {
  heartbeat();
  const timer = setInterval(() => heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await step();
  } finally {
    clearInterval(timer);
  }
}

/**
 * The on-chain phase of a session, run by the operator key. Every step is idempotent by
 * construction: the forwarder deploy skips existing code, and a flush sweeps the forwarder's whole
 * balance, with the signed transaction recorded before it is broadcast — a repeated step after a crash
 * finds the recorded transaction (and re-sends it if needed) or an empty forwarder, and never moves
 * funds twice.
 */
export function createSettlementActivities({
  db,
  operator,
  slippageBps,
  composeRetryAfterMs = 60_000,
}: SettlementActivityDependencies) {
  const factoryOf = (chainId: number): Address => {
    const factory = operator.network(chainId).forwarderFactory;
    if (!factory)
      throw ApplicationFailure.nonRetryable(
        `chain ${chainId} has no forwarder factory`,
        'ChainNotConfigured',
      );
    return factory;
  };

  async function settlementConfig(chainId: number) {
    return operator
      .client(chainId)
      .readContract({ address: factoryOf(chainId), abi: ForwarderFactory.abi, functionName: 'settlement' });
  }

  /**
   * Stores a mined flush (outcome, swept deposits, the session's settled USD, and for a stake right here
   * the delivery and a top-up's credit) and returns what the workflow needs next.
   */
  async function completeFlush(
    row: SettlementRow,
    receipt: TransactionReceipt,
    client: OperatorClient,
    tokenDecimals: number,
  ): Promise<FlushOutcome> {
    if (receipt.status !== 'success') {
      await discardFlush(db, row.id);
      throw ApplicationFailure.nonRetryable(
        `flush transaction ${receipt.transactionHash} reverted`,
        SETTLEMENT_REVERTED,
      );
    }
    const [flushed] = parseEventLogs({ abi: Forwarder.abi, eventName: 'Flushed', logs: receipt.logs });
    if (!flushed)
      throw ApplicationFailure.nonRetryable(
        `flush transaction ${receipt.transactionHash} emitted no Flushed event`,
        SETTLEMENT_REVERTED,
      );
    const { amountIn, usdeAmount, bridged, sharesOrNonce } = flushed.args;
    await recordFlushSettled(db, row, {
      flushed: { amountIn, usdeAmount, bridged, sharesOrNonce },
      settledMicroUsd: toMicroUsdRoundingDown(amountIn, tokenDecimals),
      deliveredMicroUsd: toMicroUsdRoundingDown(usdeAmount, USDE_DECIMALS),
    });
    const { settlementChainId } = await settlementConfig(Number(client.chain.id));
    return {
      txHash: receipt.transactionHash,
      amountIn: amountIn.toString(),
      usdeAmount: usdeAmount.toString(),
      bridged,
      sharesOrNonce: sharesOrNonce.toString(),
      settlementChainId: Number(settlementChainId),
    };
  }

  /** The last stored flush of this option, as the outcome a repeated step returns (the forwarder is empty). */
  async function lastFlushOutcome(
    sessionId: string,
    chainId: number,
    token: Address,
  ): Promise<FlushOutcome | undefined> {
    const last = (await listSettlements(db, sessionId))
      .filter(
        (row) =>
          row.chain_id === chainId && row.token_address === token.toLowerCase() && row.usde_amount !== null,
      )
      .at(-1);
    if (!last) return undefined;
    const { settlementChainId } = await settlementConfig(chainId);
    return {
      txHash: last.flush_tx_hash as Hex,
      amountIn: last.amount_in!,
      usdeAmount: last.usde_amount!,
      bridged: last.bridged!,
      sharesOrNonce: (last.bridged ? last.message_nonce : last.shares)!,
      settlementChainId: Number(settlementChainId),
    };
  }

  return {
    /**
     * Reorg safety: the deposit address still holds at least what the monitor saw, at the chain's head.
     * Funds a recorded flush already took (this transfer swept, or a flush in flight) count as there:
     * a retry after the flush must go on to finish it, not report the deposit missing.
     */
    async verifyDepositBalance({
      sessionId,
      chainId,
      token,
      depositAddress,
      minimum,
      txHash,
      logIndex,
    }: {
      sessionId?: string;
      chainId: number;
      token: Address;
      depositAddress: Address;
      minimum: string;
      txHash?: string;
      logIndex?: number;
    }): Promise<string> {
      return heartbeating(async () => {
        const balance = await operator
          .client(chainId)
          .readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [depositAddress] });
        if (balance >= BigInt(minimum)) return balance.toString();
        const alreadyFlushed =
          sessionId !== undefined &&
          ((await findUnfinishedFlush(db, { sessionId, chainId, tokenAddress: token })) !== undefined ||
            (txHash !== undefined &&
              logIndex !== undefined &&
              (await isDepositSettled(db, { chainId, txHash, logIndex }))));
        if (alreadyFlushed) return balance.toString();
        throw ApplicationFailure.nonRetryable(
          `deposit address ${depositAddress} holds ${balance} of ${token}, less than the ${minimum} detected (reorganised away?)`,
          DEPOSIT_MISSING,
        );
      });
    },

    /** Deploys the session's forwarder on `chainId` (skipped when its code exists); returns its address. */
    async deployForwarder({ sessionId, chainId }: { sessionId: string; chainId: number }): Promise<Address> {
      return heartbeating(async () => {
        const client = operator.client(chainId);
        const factory = factoryOf(chainId);
        const payout = await findPayoutAddress(db, { sessionId, chainId });
        if (!payout)
          throw ApplicationFailure.nonRetryable(
            `session ${sessionId} has no payment option on chain ${chainId}`,
            'SessionNotFound',
          );
        const merchant = getAddress(payout);
        const session = sessionIdToBytes16(sessionId);
        const forwarder = await client.readContract({
          address: factory,
          abi: ForwarderFactory.abi,
          functionName: 'predict',
          args: [session, merchant],
        });
        const code = await client.getCode({ address: forwarder });
        if (code && code !== '0x') return forwarder;
        const hash = await client.writeContract({
          address: factory,
          abi: ForwarderFactory.abi,
          functionName: 'deploy',
          args: [session, merchant],
        });
        const receipt = await client.waitForTransactionReceipt({ hash, timeout: 120_000 });
        if (receipt.status !== 'success') throw new Error(`forwarder deployment ${hash} reverted`);
        return forwarder;
      });
    },

    /**
     * Swaps the forwarder's whole balance of `token` to USDe with a quoted minimum, then stakes it for the
     * payout address (settlement chain) or sends it over the bridge (layer-2). The flush transaction is
     * recorded before it is broadcast, and a repeated step finishes a recorded flush instead of sending
     * another (activities/flushTransactions.ts). A revert is final for this attempt (SettlementReverted,
     * with the reason); retry-forwarder runs it again.
     */
    async flushForwarder({
      sessionId,
      chainId,
      token,
      forwarder,
      tokenDecimals,
    }: {
      sessionId: string;
      chainId: number;
      token: Address;
      forwarder: Address;
      tokenDecimals: number;
    }): Promise<FlushOutcome> {
      return heartbeating(async () => {
        const client = operator.client(chainId);
        const recorded = await findUnfinishedFlush(db, { sessionId, chainId, tokenAddress: token });
        if (recorded) {
          const receipt = await awaitRecordedFlush(db, client, recorded);
          if (receipt !== 'dropped') return completeFlush(recorded, receipt, client, tokenDecimals);
        }

        const balance = await client.readContract({
          address: token,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [forwarder],
        });
        if (balance === 0n) {
          const done = await lastFlushOutcome(sessionId, chainId, token);
          if (done) return done;
          throw ApplicationFailure.nonRetryable(
            `forwarder ${forwarder} holds no ${token} to flush`,
            SETTLEMENT_REVERTED,
          );
        }

        const minUsdeOut = quoteMinUsdeOut(balance, tokenDecimals, slippageBps);
        // Off the settlement chain the flush pays the bridge's native fee, quoted by the messenger for this
        // forwarder's own message (LayerZero's quoteSend), from the operator's balance.
        const bridgeFee = await client.readContract({
          address: forwarder,
          abi: Forwarder.abi,
          functionName: 'bridgeFee',
          args: [minUsdeOut],
        });
        const value = bridgeFee + (bridgeFee * BRIDGE_FEE_MARGIN_BPS) / 10_000n;
        const row = await preparePendingSettlement(db, {
          sessionId,
          chainId,
          tokenAddress: token,
          forwarderAddress: forwarder,
        });
        try {
          await client.simulateContract({
            address: forwarder,
            abi: Forwarder.abi,
            functionName: 'flush',
            args: [token, minUsdeOut],
            account: client.account,
            value,
          });
        } catch (error) {
          if (isRevert(error)) {
            await discardFlush(db, row.id);
            throw ApplicationFailure.nonRetryable(revertReason(error), SETTLEMENT_REVERTED);
          }
          throw error;
        }
        const data = encodeFunctionData({
          abi: Forwarder.abi,
          functionName: 'flush',
          args: [token, minUsdeOut],
        });
        const signed = await signAndRecordFlush(db, client, { row, to: forwarder, data, value });
        const receipt = await awaitRecordedFlush(db, client, signed);
        if (receipt === 'dropped')
          throw new Error(
            `flush transaction ${signed.flush_tx_hash} was replaced before it was mined; retrying`,
          );
        return completeFlush(signed, receipt, client, tokenDecimals);
      });
    },

    /**
     * Waits (heartbeating) until the bridge message of a layer-2 flush is delivered on the settlement chain
     * and staked for the merchant; returns the sUSDe shares minted there. Over LayerZero, a compose that
     * stays queued (staking reverted, or no executor ran it) is run again by the operator once it would
     * succeed: the USDe waits at the composer meanwhile, and the session stays `bridging`.
     */
    async awaitBridgeDelivery({
      sessionId,
      sourceChainId,
      nonce,
      settlementChainId,
    }: {
      sessionId: string;
      sourceChainId: number;
      nonce: string;
      settlementChainId: number;
    }): Promise<string> {
      const delivery = operator.network(sourceChainId).contracts.layerZeroEndpoint
        ? await awaitLayerZeroDelivery({ sessionId, sourceChainId, nonce: BigInt(nonce), settlementChainId })
        : await awaitStandInDelivery({ sessionId, sourceChainId, nonce: BigInt(nonce), settlementChainId });
      const row = (await listSettlements(db, sessionId)).find(
        (entry) => entry.chain_id === sourceChainId && entry.message_nonce === nonce,
      );
      if (row)
        await recordBridgeDelivered(db, row, {
          shares: delivery.shares,
          usdeAmount: delivery.usdeAmount,
          deliveredMicroUsd: toMicroUsdRoundingDown(delivery.usdeAmount, USDE_DECIMALS),
        });
      return delivery.shares.toString();
    },
  };

  interface BridgePacket {
    sessionId: string;
    sourceChainId: number;
    nonce: bigint;
    settlementChainId: number;
  }

  interface Delivery {
    usdeAmount: bigint;
    shares: bigint;
  }

  /** The local stand-in messenger: delivered once the settlement chain's messenger says so, staked in the same call. */
  async function awaitStandInDelivery({
    sessionId,
    sourceChainId,
    nonce,
    settlementChainId,
  }: BridgePacket): Promise<Delivery> {
    const client = operator.client(settlementChainId);
    const { messenger, settlementComposer } = await settlementConfig(settlementChainId);
    for (;;) {
      const delivered = await client.readContract({
        address: messenger,
        abi: LocalMessenger.abi,
        functionName: 'delivered',
        args: [BigInt(sourceChainId), nonce],
      });
      if (delivered) break;
      heartbeat();
      await sleep(500);
    }
    const composed = await findRecentEvent(client, {
      address: settlementComposer,
      abi: StakingComposer.abi,
      eventName: 'Composed',
      args: { sessionId: sessionIdToBytes16(sessionId) },
      match: (log) => log.args.srcChainId === BigInt(sourceChainId) && log.args.nonce === nonce,
    });
    if (!composed)
      throw new Error(
        `message ${sourceChainId}/${nonce} delivered but no Composed event found for session ${sessionId}`,
      );
    return { usdeAmount: composed.args.usdeAmount!, shares: composed.args.shares! };
  }

  /**
   * LayerZero: the packet is identified by its GUID (nonce, source endpoint and OFT, destination endpoint and
   * OFT); the destination endpoint's compose queue says whether it has arrived (a queued message hash) and
   * been staked (RECEIVED). The composer's `Composed` event of that GUID carries the delivered USDe and shares.
   */
  async function awaitLayerZeroDelivery(packet: BridgePacket): Promise<Delivery> {
    const { sourceChainId, settlementChainId, nonce } = packet;
    const source = operator.client(sourceChainId);
    const destination = operator.client(settlementChainId);
    const { messenger, settlementComposer } = await settlementConfig(sourceChainId);
    const [oft, route] = await Promise.all([
      source.readContract({ address: messenger, abi: LayerZeroSettlementMessenger.abi, functionName: 'oft' }),
      source.readContract({
        address: messenger,
        abi: LayerZeroSettlementMessenger.abi,
        functionName: 'routeOf',
        args: [BigInt(settlementChainId)],
      }),
    ]);
    const peer = await source.readContract({
      address: oft,
      abi: oappAbi,
      functionName: 'peers',
      args: [route.eid],
    });
    const destinationOft = getAddress(`0x${peer.slice(-40)}`);
    const srcEid = operator.network(sourceChainId).layerZeroEid;
    const guid = packetGuid({ nonce, srcEid, sender: oft, dstEid: route.eid, receiver: peer });
    const endpoint = await destination.readContract({
      address: destinationOft,
      abi: oappAbi,
      functionName: 'endpoint',
    });
    const queueArgs = [destinationOft, settlementComposer, guid, 0] as const;

    let pendingSince: number | undefined;
    for (;;) {
      const queued = await destination.readContract({
        address: endpoint,
        abi: layerZeroEndpointAbi,
        functionName: 'composeQueue',
        args: queueArgs,
      });
      if (queued === COMPOSE_RECEIVED) break;
      if (queued === COMPOSE_EMPTY) {
        heartbeat({ guid, state: 'in_flight' });
        await sleep(500);
        continue;
      }
      pendingSince ??= Date.now();
      if (Date.now() - pendingSince < composeRetryAfterMs) {
        heartbeat({ guid, state: 'compose_queued' });
        await sleep(500);
        continue;
      }
      const reason = await retryCompose(destination, {
        ...packet,
        srcEid,
        messenger,
        queued,
        endpoint,
        queueArgs,
      });
      heartbeat({ guid, state: reason ? 'compose_failed' : 'compose_retried', reason });
      if (reason) await sleep(Math.min(composeRetryAfterMs, 30_000));
    }
    const composed = await findRecentEvent(destination, {
      address: settlementComposer,
      abi: LayerZeroStakingComposer.abi,
      eventName: 'Composed',
      args: { guid },
    });
    if (!composed) throw new Error(`packet ${guid} was composed but its Composed event was not found`);
    return { usdeAmount: composed.args.usdeAmount!, shares: composed.args.shares! };
  }

  /**
   * Runs a queued compose from the operator's key (`endpoint.lzCompose` is open to anyone): rebuilds the
   * message the OFT queued from what the flush recorded, checks it against the queued hash, simulates, and
   * sends only a compose that would succeed. Returns why it did not run, if it did not.
   */
  async function retryCompose(
    client: OperatorClient,
    compose: BridgePacket & {
      srcEid: number;
      messenger: Address;
      queued: Hex;
      endpoint: Address;
      queueArgs: readonly [from: Address, to: Address, guid: Hex, index: number];
    },
  ): Promise<string | undefined> {
    const { sessionId, sourceChainId, nonce, srcEid, messenger, queued, endpoint, queueArgs } = compose;
    const guid = queueArgs[2];
    const row = (await listSettlements(db, sessionId)).find(
      (entry) => entry.chain_id === sourceChainId && entry.message_nonce === nonce.toString(),
    );
    const payout = await findPayoutAddress(db, { sessionId, chainId: sourceChainId });
    if (!row?.usde_amount || !payout) return `no recorded flush for packet ${guid}`;
    const message = oftComposeMessage({
      nonce,
      srcEid,
      amountLD: BigInt(row.usde_amount),
      composeFrom: messenger,
      composeMsg: settlementComposeMsg({
        merchant: getAddress(payout),
        sessionId: sessionIdToBytes16(sessionId),
      }),
    });
    if (keccak256(message) !== queued)
      return `the queued compose of ${guid} is not the message this flush sent`;
    const call = {
      address: endpoint,
      abi: layerZeroEndpointAbi,
      functionName: 'lzCompose',
      args: [...queueArgs, message, '0x'],
      account: client.account,
    } as const;
    try {
      await client.simulateContract(call);
    } catch (error) {
      if (isRevert(error)) return revertReason(error);
      throw error;
    }
    const hash = await client.writeContract(call);
    const receipt = await client.waitForTransactionReceipt({ hash, timeout: 120_000 });
    return receipt.status === 'success' ? undefined : `lzCompose ${hash} reverted`;
  }
}

export type SettlementActivities = ReturnType<typeof createSettlementActivities>;
