import { ApplicationFailure, heartbeat, sleep } from '@temporalio/activity';
import {
  BaseError,
  ContractFunctionRevertedError,
  erc20Abi,
  getAddress,
  parseEventLogs,
  type Address,
  type Hex,
} from 'viem';
import { sessionIdToBytes16 } from '../chain/depositAddress';
import type { OperatorChains } from '../chain/operatorChains';
import { Forwarder, ForwarderFactory, LocalMessenger, StakingComposer } from '../contracts/artifacts';
import type { Db } from '../db/client';
import { markDepositsSettled } from '../db/deposits';
import {
  discardFlush,
  listSettlements,
  preparePendingSettlement,
  recordBridgeDelivered,
  recordFlushOutcome,
  recordFlushSent,
  type SettlementRow,
} from '../db/settlements';
import { findSessionById } from '../db/sessions';

export interface SettlementActivityDependencies {
  db: Db;
  operator: OperatorChains;
  /** Slippage allowed against stablecoin parity when quoting `minUsdeOut`, in basis points. */
  slippageBps: number;
}

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

/** The revert as a readable reason: the custom error with its arguments, or viem's short message. */
function revertReason(error: unknown): string {
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
 * balance, with the transaction recorded before it is awaited — a repeated step after a crash finds
 * the recorded transaction or an empty forwarder and never moves funds twice.
 */
export function createSettlementActivities({ db, operator, slippageBps }: SettlementActivityDependencies) {
  const factoryOf = (chainId: number): Address => {
    const factory = operator.network(chainId).forwarderFactory;
    if (!factory)
      throw ApplicationFailure.nonRetryable(
        `chain ${chainId} has no forwarder factory`,
        'ChainNotConfigured',
      );
    return factory;
  };

  async function payoutAddressOf(sessionId: string): Promise<Address> {
    const session = await findSessionById(db, sessionId);
    if (!session) throw ApplicationFailure.nonRetryable(`session ${sessionId} not found`, 'SessionNotFound');
    return getAddress(session.payout_address);
  }

  async function settlementConfig(chainId: number) {
    return operator
      .client(chainId)
      .readContract({ address: factoryOf(chainId), abi: ForwarderFactory.abi, functionName: 'settlement' });
  }

  /** Reads the Flushed event of a mined flush and stores the outcome. */
  async function completeFlush(row: SettlementRow, txHash: Hex, chainId: number): Promise<FlushOutcome> {
    const client = operator.client(chainId);
    const receipt = await client.waitForTransactionReceipt({ hash: txHash, timeout: 120_000 });
    if (receipt.status !== 'success') {
      await discardFlush(db, row.id);
      throw ApplicationFailure.nonRetryable(`flush transaction ${txHash} reverted`, SETTLEMENT_REVERTED);
    }
    const [flushed] = parseEventLogs({ abi: Forwarder.abi, eventName: 'Flushed', logs: receipt.logs });
    if (!flushed)
      throw ApplicationFailure.nonRetryable(
        `flush transaction ${txHash} emitted no Flushed event`,
        SETTLEMENT_REVERTED,
      );
    const { amountIn, usdeAmount, bridged, sharesOrNonce } = flushed.args;
    await recordFlushOutcome(db, row.id, { amountIn, usdeAmount, bridged, sharesOrNonce });
    await markDepositsSettled(db, { sessionId: row.session_id, chainId, tokenAddress: row.token_address });
    const { settlementChainId } = await settlementConfig(chainId);
    return {
      txHash,
      amountIn: amountIn.toString(),
      usdeAmount: usdeAmount.toString(),
      bridged,
      sharesOrNonce: sharesOrNonce.toString(),
      settlementChainId: Number(settlementChainId),
    };
  }

  return {
    /** Reorg safety: the deposit address still holds at least what the monitor saw, at the chain's head. */
    async verifyDepositBalance({
      chainId,
      token,
      depositAddress,
      minimum,
    }: {
      chainId: number;
      token: Address;
      depositAddress: Address;
      minimum: string;
    }): Promise<string> {
      return heartbeating(async () => {
        const balance = await operator
          .client(chainId)
          .readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [depositAddress] });
        if (balance < BigInt(minimum)) {
          throw ApplicationFailure.nonRetryable(
            `deposit address ${depositAddress} holds ${balance} of ${token}, less than the ${minimum} detected (reorganised away?)`,
            DEPOSIT_MISSING,
          );
        }
        return balance.toString();
      });
    },

    /** Deploys the session's forwarder on `chainId` (skipped when its code exists); returns its address. */
    async deployForwarder({ sessionId, chainId }: { sessionId: string; chainId: number }): Promise<Address> {
      return heartbeating(async () => {
        const client = operator.client(chainId);
        const factory = factoryOf(chainId);
        const merchant = await payoutAddressOf(sessionId);
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
     * merchant (settlement chain) or sends it over the bridge (layer-2). A revert is final for this
     * attempt (SettlementReverted, with the reason); retry-forwarder runs it again.
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
        // A flush sent before a crash: wait for it instead of sending another.
        const sent = (await listSettlements(db, sessionId)).find(
          (row) =>
            row.chain_id === chainId &&
            row.token_address === token.toLowerCase() &&
            row.flush_tx_hash &&
            row.usde_amount === null,
        );
        if (sent) return completeFlush(sent, sent.flush_tx_hash as Hex, chainId);

        const balance = await client.readContract({
          address: token,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [forwarder],
        });
        if (balance === 0n) {
          const done = (await listSettlements(db, sessionId)).filter(
            (row) =>
              row.chain_id === chainId &&
              row.token_address === token.toLowerCase() &&
              row.usde_amount !== null,
          );
          const last = done.at(-1);
          if (last) {
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
          throw ApplicationFailure.nonRetryable(
            `forwarder ${forwarder} holds no ${token} to flush`,
            SETTLEMENT_REVERTED,
          );
        }

        const minUsdeOut = quoteMinUsdeOut(balance, tokenDecimals, slippageBps);
        const row = await preparePendingSettlement(db, {
          sessionId,
          chainId,
          tokenAddress: token,
          forwarderAddress: forwarder,
        });
        let request;
        try {
          ({ request } = await client.simulateContract({
            address: forwarder,
            abi: Forwarder.abi,
            functionName: 'flush',
            args: [token, minUsdeOut],
            account: client.account,
          }));
        } catch (error) {
          if (isRevert(error)) {
            await discardFlush(db, row.id);
            throw ApplicationFailure.nonRetryable(revertReason(error), SETTLEMENT_REVERTED);
          }
          throw error;
        }
        const txHash = await client.writeContract(request);
        await recordFlushSent(db, row.id, txHash);
        return completeFlush(row, txHash, chainId);
      });
    },

    /**
     * Waits (heartbeating) until the bridge message of a layer-2 flush is delivered on the settlement
     * chain and staked for the merchant; returns the sUSDe shares minted there.
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
      const client = operator.client(settlementChainId);
      const { messenger, settlementComposer } = await settlementConfig(settlementChainId);
      for (;;) {
        const delivered = await client.readContract({
          address: messenger,
          abi: LocalMessenger.abi,
          functionName: 'delivered',
          args: [BigInt(sourceChainId), BigInt(nonce)],
        });
        if (delivered) break;
        heartbeat();
        await sleep(500);
      }
      const logs = await client.getContractEvents({
        address: settlementComposer,
        abi: StakingComposer.abi,
        eventName: 'Composed',
        args: { sessionId: sessionIdToBytes16(sessionId) },
        fromBlock: 0n,
      });
      const composed = logs.find(
        (log) => log.args.srcChainId === BigInt(sourceChainId) && log.args.nonce === BigInt(nonce),
      );
      if (!composed)
        throw new Error(
          `message ${sourceChainId}/${nonce} delivered but no Composed event found for session ${sessionId}`,
        );
      const row = (await listSettlements(db, sessionId)).find(
        (entry) => entry.chain_id === sourceChainId && entry.message_nonce === nonce,
      );
      if (row) await recordBridgeDelivered(db, row.id, composed.args.shares!);
      return composed.args.shares!.toString();
    },
  };
}

export type SettlementActivities = ReturnType<typeof createSettlementActivities>;
