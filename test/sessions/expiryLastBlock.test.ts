import { erc20Abi, type Address } from 'viem';
import { findLatestSessionEventOfType } from '../../db/sessionEvents';
import { mintToPayer, startSettlementStack, type SettlementStack } from '../settlement/settlementStack';
import { waitFor } from '../settlement/waitFor';

/**
 * The boundary of an unpaid session's expiry (docs/decisions.md "Expiry in one activity"), on a real anvil
 * chain, the real worker and deposit monitor, Temporal and Postgres: the workflow's timer has fired and its
 * one expiry activity is waiting for the monitor while the deposit's confirmations are still to come. A
 * transfer in the last block stamped before `expiresAt` pays the session; one in the first block stamped
 * at `expiresAt` is late and the session expires.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;
/** The session ends this long after the chain's time when it is created: room for the mint before it. */
const LIFE_AFTER_CHAIN_NOW_SEC = 10;

describe('expiry at the last block: the expiry activity waits for the monitor, then decides by block time', () => {
  let stack: SettlementStack;
  beforeAll(async () => {
    stack = await startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA] });
  }, 180_000);
  afterAll(() => stack?.stop());

  const chain = () => stack.chain(ETHEREUM_SEPOLIA);

  /**
   * A session whose `expiresAt` is LIFE_AFTER_CHAIN_NOW_SEC after the chain's current time (the API's clock
   * set to the chain's, with the shortest life the API accepts), and its USDC option on the chain.
   */
  async function sessionEndingSoon() {
    // The chain's time is its last block's, or the wall clock's once that is later (anvil stamps new blocks so).
    const chainNowMs = Math.max(Number((await chain().getBlock()).timestamp) * 1000, Date.now());
    const offsetMs = chainNowMs - Date.now() - (60 - LIFE_AFTER_CHAIN_NOW_SEC) * 1000;
    const app = await stack.startApp({ now: () => new Date(Date.now() + offsetMs) });
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: stack.sk,
      json: { amount: '2', sandboxMode: true, expiresInSec: 60 },
    });
    expect(created.status).toBe(201);
    const sessionId = created.body.id as string;
    const read = await stack.app.request(`/v1/sessions/${sessionId}`);
    const option = (
      read.body.paymentOptions as {
        chainId: number;
        symbol: string;
        tokenAddress: Address;
        depositAddress: Address;
        amount: string;
      }[]
    ).find((candidate) => candidate.chainId === ETHEREUM_SEPOLIA && candidate.symbol === 'USDC')!;
    // Block times are whole seconds: the first one not before expiresAt (which may carry milliseconds).
    return { sessionId, expiresAtSec: Math.ceil(Date.parse(created.body.expiresAt) / 1000), option };
  }

  /** Mints to the payer now, then transfers the option's amount in a block stamped `timestamp`. */
  async function payInBlockStamped(
    option: { tokenAddress: Address; depositAddress: Address; amount: string },
    timestamp: number,
  ) {
    const client = chain();
    const amount = BigInt(option.amount);
    const minted = await mintToPayer(client, option.tokenAddress, amount);
    expect(Number((await client.getBlock({ blockNumber: minted.blockNumber })).timestamp)).toBeLessThan(
      timestamp,
    );
    await client.setNextBlockTimestamp({ timestamp: BigInt(timestamp) });
    const hash = await client.writeContract({
      address: option.tokenAddress,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [option.depositAddress, amount],
    });
    const receipt = await client.waitForTransactionReceipt({ hash });
    expect(Number((await client.getBlock({ blockNumber: receipt.blockNumber })).timestamp)).toBe(timestamp);
  }

  /**
   * Waits until the session's workflow is in its expiry activity (its timer fired, the monitor has not
   * scanned past expiresAt: the transfer's confirmations are not mined yet), then mines them.
   */
  async function confirmWhileTheExpiryWaits(sessionId: string, expiresAtSec: number) {
    const handle = stack.temporal.workflow.getHandle(`session-${sessionId}`);
    await waitFor(
      async () =>
        ((await handle.describe()).raw.pendingActivities ?? []).map(
          (activity) => activity.activityType?.name,
        ),
      (pending) => pending.includes('expireAfterDepositScans'),
      `session ${sessionId}'s expiry activity`,
      Math.max(0, expiresAtSec * 1000 - Date.now()) + 60_000,
    );
    // Past expiresAt by the chain's clock too, whatever the wall clock says.
    await chain()
      .setNextBlockTimestamp({ timestamp: BigInt(expiresAtSec + 1) })
      .catch(() => undefined);
    await chain().mine({ blocks: CONFIRMATIONS + 1 });
  }

  const depositKinds = async (sessionId: string) =>
    (await stack.db.selectFrom('deposits').select('kind').where('session_id', '=', sessionId).execute()).map(
      (row) => row.kind,
    );

  it('a deposit in the last block before expiry, confirmed after the timer fired: the session is paid (completed), never expired', async () => {
    const { sessionId, expiresAtSec, option } = await sessionEndingSoon();
    await payInBlockStamped(option, expiresAtSec - 1);
    await confirmWhileTheExpiryWaits(sessionId, expiresAtSec);

    await waitFor(
      async () => (await stack.app.request(`/v1/sessions/${sessionId}/status`)).body.status as string,
      (status) => status === 'completed',
      `session ${sessionId}`,
      90_000,
    );
    expect(await depositKinds(sessionId)).toEqual(['accepted']);
    expect(
      await findLatestSessionEventOfType(stack.db, sessionId, ['session.expired', 'session.underpaid']),
    ).toBeUndefined();
    expect(await findLatestSessionEventOfType(stack.db, sessionId, ['session.confirming'])).toBeDefined();
  }, 150_000);

  it('a deposit in the first block stamped at or after expiresAt is late: the session expires with session.expired', async () => {
    const { sessionId, expiresAtSec, option } = await sessionEndingSoon();
    await payInBlockStamped(option, expiresAtSec);
    await confirmWhileTheExpiryWaits(sessionId, expiresAtSec);

    const handle = stack.temporal.workflow.getHandle(`session-${sessionId}`);
    expect(await handle.result()).toMatchObject({ status: 'expired' });
    expect(
      (
        await stack.db
          .selectFrom('sessions')
          .select('status')
          .where('id', '=', sessionId)
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('expired');
    expect((await findLatestSessionEventOfType(stack.db, sessionId, ['session.expired']))?.type).toBe(
      'session.expired',
    );
    await waitFor(
      () => depositKinds(sessionId),
      (kinds) => kinds.length > 0,
      `session ${sessionId}'s deposit`,
    );
    expect(await depositKinds(sessionId)).toEqual(['late']);
  }, 150_000);
});
