import { getAddress } from 'viem';
import type { DepositDetected } from '../../../activities/sessions';
import { findUnsettledDeposits } from '../../../db/deposits';
import { hasLiveForwarderRefund } from '../../../db/refunds';
import { effectiveStatus, findMerchantSession, listPaymentOptions } from '../../../db/sessions';
import { retryForwarder } from '../../../workflowClient/sessions';
import { withTemporalDeadline } from '../../../workflowClient/connection';
import type { AppContext } from '../../appContext';
import { conflict } from '../../httpErrors';
import { sessionNotFound } from './sessions';

/**
 * Re-runs the on-chain phase of a failed session, or settles funds that reached an expired or
 * completed session late. Anything else is not retryable (409).
 */
export async function retrySessionForwarder(
  app: AppContext,
  { merchantId, sessionId }: { merchantId: string; sessionId: string },
) {
  const session = await findMerchantSession(app.db, merchantId, sessionId);
  if (!session) throw sessionNotFound();
  const status = effectiveStatus(session, app.now());
  const failed = status === 'failed';
  // A failed session's workflow normally waits for the retry signal; if it is gone (terminated by an
  // operator), its unsettled deposits start a settling run like a late payment does.
  const deposit = await unsettledDeposit(app, session.id);
  if (!failed && !(deposit && (status === 'expired' || status === 'completed'))) {
    throw conflict(
      `Session is not in a retryable state (status ${status}${status === 'expired' || status === 'completed' ? ', no unsettled deposit' : ''})`,
    );
  }
  // A sweep would take the money a forwarder refund is paid from (docs/operations.md "Forwarder refunds and
  // sweeps"); the flush step refuses it too, under the session's lock.
  if (await hasLiveForwarderRefund(app.db, session.id))
    throw conflict(
      'A refund from this session’s forwarder is pending; cancel it or let it finish before sweeping the forwarder',
    );
  const outcome = await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
    retryForwarder(app.temporal, {
      sessionId: session.id,
      merchantId,
      sandboxMode: session.sandbox_mode,
      expiresAt: session.expires_at,
      taskQueue: app.taskQueues.sessions,
      failed,
      deposit,
    }),
  );
  if (outcome === 'busy')
    throw conflict('Session workflow is still running; retry once it has settled or failed');
  return {
    status: 202,
    body: {
      id: session.id,
      accepted: true,
      action: outcome === 'signalled' ? 'retrying' : 'settling_late_deposit',
    },
  };
}

/** The unsettled deposits of one (chain, token) of the session, as the deposit a settling run needs. */
async function unsettledDeposit(app: AppContext, sessionId: string): Promise<DepositDetected | undefined> {
  const deposits = await findUnsettledDeposits(app.db, sessionId);
  const first = deposits[0];
  if (!first) return undefined;
  const sameOption = deposits.filter(
    (deposit) => deposit.chain_id === first.chain_id && deposit.token_address === first.token_address,
  );
  const option = (await listPaymentOptions(app.db, sessionId)).find(
    (entry) => entry.chain_id === first.chain_id && entry.token_address.toLowerCase() === first.token_address,
  );
  return {
    chainId: first.chain_id,
    token: getAddress(first.token_address),
    amount: sameOption.reduce((sum, deposit) => sum + BigInt(deposit.amount), 0n).toString(),
    txHash: first.tx_hash,
    blockNumber: String(first.block_number),
    logIndex: first.log_index,
    depositAddress: first.deposit_address,
    decimals: option?.decimals ?? 6,
  };
}
