import { ApplicationFailure } from '@temporalio/activity';
import {
  encodeFunctionData,
  erc20Abi,
  parseEventLogs,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import type { OperatorClient } from '../chain/operatorChains';
import { toMicroUsdRoundingDown } from '../money/microUsd';
import { CappedForwarder, Forwarder } from '../contracts/artifacts';
import { findHoldCapMicroUsd } from '../db/sessions';
import {
  discardFlush,
  findUnfinishedFlush,
  listSettlements,
  preparePendingSettlement,
  recordFlushSettled,
  type SettlementRow,
} from '../db/settlements';
import { liveForwarderRefundUnits } from '../db/refunds';
import { awaitRecordedFlush, signAndRecordFlush } from './flushTransactions';
import {
  heartbeating,
  isRevert,
  revertReason,
  SETTLEMENT_REVERTED,
  USDE_DECIMALS,
  type SettlementStepContext,
} from './settlementSteps';
import { bridgeFeeWithMargin, quoteMinUsdeOut } from './swapQuote';

export interface FlushOutcome {
  txHash: Hex;
  amountIn: string;
  usdeAmount: string;
  bridged: boolean;
  /** sUSDe shares minted to the merchant (settlement chain) or the bridge message nonce (layer-2). */
  sharesOrNonce: string;
  settlementChainId: number;
}

export interface FlushForwarderInput {
  sessionId: string;
  chainId: number;
  token: Address;
  forwarder: Address;
  tokenDecimals: number;
}

/**
 * Swaps the forwarder's whole balance of `token` (for a session that holds an overpayment, what its capped
 * forwarder's `flushable` still lets through) to USDe with a quoted minimum, then stakes it for the
 * payout address (settlement chain) or sends it over the bridge (layer-2). The flush transaction is
 * recorded before it is broadcast, and a repeated step finishes a recorded flush instead of sending
 * another (activities/flushTransactions.ts). A revert is final for this attempt (SettlementReverted,
 * with the reason); retry-forwarder runs it again.
 */
export function flushForwarder(
  context: SettlementStepContext,
  slippageBps: number,
  input: FlushForwarderInput,
): Promise<FlushOutcome> {
  const { db, operator } = context;
  const { sessionId, chainId, token, forwarder, tokenDecimals } = input;
  return heartbeating(async () => {
    const client = operator.client(chainId);
    const recorded = await findUnfinishedFlush(db, { sessionId, chainId, tokenAddress: token });
    if (recorded) {
      const receipt = await awaitRecordedFlush(db, client, recorded);
      if (receipt !== 'dropped') return completeFlush(context, recorded, receipt, client, tokenDecimals);
    }

    // What the flush will settle: the whole balance, or for a held overpayment what the cap still lets through.
    const balance =
      (await findHoldCapMicroUsd(db, sessionId)) === undefined
        ? await client.readContract({
            address: token,
            abi: erc20Abi,
            functionName: 'balanceOf',
            args: [forwarder],
          })
        : await client.readContract({
            address: forwarder,
            abi: CappedForwarder.abi,
            functionName: 'flushable',
            args: [token],
          });
    if (balance === 0n) {
      const done = await lastFlushOutcome(context, sessionId, chainId, token);
      if (done) return done;
      throw ApplicationFailure.nonRetryable(
        `forwarder ${forwarder} holds no ${token} to flush (or only a held overpayment)`,
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
    const value = bridgeFeeWithMargin(bridgeFee);
    const row = await prepareFlushBesideRefunds(db, { sessionId, chainId, token, forwarder });
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
    const data = encodeFunctionData({ abi: Forwarder.abi, functionName: 'flush', args: [token, minUsdeOut] });
    const signed = await signAndRecordFlush(db, client, { row, to: forwarder, data, value });
    const receipt = await awaitRecordedFlush(db, client, signed);
    if (receipt === 'dropped')
      throw new Error(`flush transaction ${signed.flush_tx_hash} was replaced before it was mined; retrying`);
    return completeFlush(context, signed, receipt, client, tokenDecimals);
  });
}

/** A flush refused because forwarder refunds of the session hold money in the forwarder. */
export const REFUND_PENDING = 'RefundPending';

/**
 * The flush's pending record, written under the session's row lock, the lock a refund is created and
 * authorized under (docs/operations.md "Forwarder refunds and sweeps"): while a forwarder refund of this
 * option is live (waiting for its address or authorization, or processing), the flush is refused and sends
 * nothing, since it would sweep the refund's money; once the record exists, no forwarder refund of the option
 * is created or authorized until the flush is stored as mined.
 */
async function prepareFlushBesideRefunds(
  db: SettlementStepContext['db'],
  {
    sessionId,
    chainId,
    token,
    forwarder,
  }: { sessionId: string; chainId: number; token: Address; forwarder: Address },
): Promise<SettlementRow> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom('sessions').select('id').where('id', '=', sessionId).forUpdate().execute();
    const held = await liveForwarderRefundUnits(trx, { sessionId, chainId, token });
    if (held > 0n)
      throw ApplicationFailure.nonRetryable(
        `forwarder ${forwarder} holds ${held} base units of ${token} for refunds of the session; the sweep waits until they end`,
        REFUND_PENDING,
      );
    return preparePendingSettlement(trx, {
      sessionId,
      chainId,
      tokenAddress: token,
      forwarderAddress: forwarder,
    });
  });
}

/**
 * Stores a mined flush (outcome, swept deposits, the session's settled USD, and for a stake right here
 * the delivery and a top-up's credit) and returns what the workflow needs next.
 */
async function completeFlush(
  { db, settlementConfig }: SettlementStepContext,
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
  { db, settlementConfig }: SettlementStepContext,
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
