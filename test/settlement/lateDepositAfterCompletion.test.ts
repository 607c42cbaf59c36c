import { sql } from 'kysely';
import { erc20Abi, getAddress, type Address } from 'viem';
import { signInNewMerchant } from '../harness/merchants';
import { payDeposit, startSettlementStack, statusesRecorded, type SettlementStack } from './settlementStack';
import { waitFor } from './waitFor';

/**
 * Security review II, finding 11: a completed session is final. A deposit that reaches it late is settled
 * to the payout address like the payment was, but the session never leaves `completed` and never sends a
 * second `session.confirming`. Real chain, worker, deposit monitor, Temporal and Postgres.
 */
const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;

interface PaymentOption {
  chainId: number;
  symbol: string;
  tokenAddress: Address;
  depositAddress: Address;
  amount: string;
}

describe('a late deposit into a completed session', () => {
  let stack: SettlementStack;
  beforeAll(async () => {
    stack = await startSettlementStack({ chainIds: [ETHEREUM_SEPOLIA] });
  }, 180_000);
  afterAll(() => stack?.stop());

  const confirm = () => stack.chain(ETHEREUM_SEPOLIA).mine({ blocks: CONFIRMATIONS + 1 });
  const susdeOf = (owner: Address) =>
    stack.chain(ETHEREUM_SEPOLIA).readContract({
      address: stack.contracts(ETHEREUM_SEPOLIA).susde!,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [owner],
    });
  const eventsOf = (sessionId: string) =>
    stack.db
      .selectFrom('events')
      .select(['id', 'type'])
      .where('session_id', '=', sessionId)
      .orderBy('created_at')
      .execute();
  const settlementsOf = (sessionId: string) =>
    stack.db
      .selectFrom('settlements')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('usde_amount', 'is not', null)
      .orderBy('created_at')
      .execute();
  /** Activity types the session's latest workflow run scheduled, in order. */
  const activitiesScheduled = async (sessionId: string) => {
    const history = await stack.temporal.workflow.getHandle(`session-${sessionId}`).fetchHistory();
    return history.events!.flatMap((event) => {
      const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
      return name ? [name] : [];
    });
  };

  it('finding 11 — a late deposit into a completed session is settled to the payout address while the session stays completed, and no second session.confirming is sent', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const payout = getAddress(merchant.account.address);
    const sk = await stack.app.request('/v1/merchants/me/api-keys', {
      method: 'POST',
      headers: merchant.auth,
      json: {},
    });
    const created = await stack.app.request('/v1/sessions', {
      method: 'POST',
      headers: { authorization: `Bearer ${sk.body.rawKey}` },
      json: { amount: '3', sandboxMode: true },
    });
    expect(created.status).toBe(201);
    const sessionId = created.body.id as string;
    const publicView = await stack.app.request(`/v1/sessions/${sessionId}`);
    const option = (publicView.body.paymentOptions as PaymentOption[]).find(
      (entry) => entry.chainId === ETHEREUM_SEPOLIA && entry.symbol === 'USDC',
    )!;
    const chain = stack.chain(ETHEREUM_SEPOLIA);

    await payDeposit(chain, { token: option.tokenAddress, to: option.depositAddress, amount: 3_000_000n });
    await confirm();
    expect(await statusesRecorded(stack.temporal, sessionId)).toEqual(['confirming', 'completed']);
    const [confirming, completed] = await eventsOf(sessionId);
    expect(confirming).toMatchObject({ type: 'session.confirming' });
    expect(completed).toMatchObject({ type: 'session.completed' });

    // Every status change of this session from here on is written down by the database itself.
    const log = `status_log_${sessionId.replace(/-/g, '')}`;
    await sql
      .raw(
        `CREATE TABLE ${log} (old_status text, new_status text);
         CREATE FUNCTION ${log}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
           IF NEW.id = '${sessionId}' AND NEW.status IS DISTINCT FROM OLD.status THEN
             INSERT INTO ${log} VALUES (OLD.status, NEW.status);
           END IF;
           RETURN NEW;
         END $$;
         CREATE TRIGGER ${log} AFTER UPDATE ON sessions FOR EACH ROW EXECUTE FUNCTION ${log}();`,
      )
      .execute(stack.db);
    try {
      const before = await susdeOf(payout);
      await payDeposit(chain, { token: option.tokenAddress, to: option.depositAddress, amount: 1_000_000n });
      await confirm();
      await waitFor(
        () => stack.db.selectFrom('deposits').select('kind').where('session_id', '=', sessionId).execute(),
        (rows) => rows.length === 2,
        'late deposit',
        90_000,
      );

      const accepted = await stack.app.request(`/v1/merchants/me/sessions/${sessionId}/retry-forwarder`, {
        method: 'POST',
        headers: merchant.auth,
      });
      expect(accepted.status).toBe(202);
      expect(accepted.body.action).toBe('settling_late_deposit');

      // The settling run entered no status and never scheduled the event or its deliveries.
      expect(await statusesRecorded(stack.temporal, sessionId)).toEqual([]);
      const scheduled = await activitiesScheduled(sessionId);
      expect(scheduled).toEqual(expect.arrayContaining(['flushForwarder']));
      expect(scheduled).not.toContain('recordSessionConfirmingEvent');
      expect(scheduled).not.toContain('startWebhookDeliveries');
      const changes = await sql<{
        old_status: string;
        new_status: string;
      }>`SELECT * FROM ${sql.table(log)}`.execute(stack.db);
      expect(changes.rows).toEqual([]);

      // The late dollar reached the payout address the same way the payment did.
      const settlements = await settlementsOf(sessionId);
      expect(settlements.map((row) => row.amount_in)).toEqual(['3000000', '1000000']);
      expect((await susdeOf(payout)) - before).toBe(BigInt(settlements[1]!.shares!));
      const summary = await stack.app.request(`/v1/merchants/me/sessions/${sessionId}`, {
        headers: merchant.auth,
      });
      expect(summary.body).toMatchObject({
        status: 'completed',
        amount: '3',
        settledAmount: '4',
        failureReason: null,
      });
      // One session.confirming, the first one, id unchanged; and one session.completed, from the payment.
      expect(await eventsOf(sessionId)).toEqual([confirming, completed]);
      // Nothing is left to settle.
      const again = await stack.app.request(`/v1/merchants/me/sessions/${sessionId}/retry-forwarder`, {
        method: 'POST',
        headers: merchant.auth,
      });
      expect(again.status).toBe(409);
    } finally {
      await sql
        .raw(`DROP TRIGGER ${log} ON sessions; DROP FUNCTION ${log}(); DROP TABLE ${log};`)
        .execute(stack.db);
    }
  }, 240_000);

  it('finding 11 — the database refuses a second session.confirming event for one session, and any status change of a completed session', async () => {
    const merchant = await signInNewMerchant(stack.app);
    const sk = await stack.app.request('/v1/merchants/me/api-keys', {
      method: 'POST',
      headers: merchant.auth,
      json: {},
    });
    const created = await stack.app.request('/v1/sessions', {
      method: 'POST',
      headers: { authorization: `Bearer ${sk.body.rawKey}` },
      json: { amount: '2', sandboxMode: true },
    });
    const event = (n: string) => ({
      id: `evt_00000000-0000-4000-8000-${created.body.id.slice(-12).replace(/.$/, n)}`,
      type: 'session.confirming',
      merchant_id: merchant.merchantId,
      session_id: created.body.id as string,
      payload: '{}',
      created_at: new Date(),
    });
    await stack.db.insertInto('events').values(event('a')).execute();
    await expect(stack.db.insertInto('events').values(event('b')).execute()).rejects.toThrow(
      /events_session_type_once/,
    );
    expect(await eventsOf(created.body.id)).toHaveLength(1);

    const sessionId = created.body.id as string;
    await stack.temporal.workflow.getHandle(`session-${sessionId}`).terminate('test: completed by hand');
    await sql`UPDATE sessions SET status = 'completed' WHERE id = ${sessionId}`.execute(stack.db);
    for (const status of ['confirming', 'failed', 'expired', 'awaiting_payment']) {
      await expect(
        sql`UPDATE sessions SET status = ${status} WHERE id = ${sessionId}`.execute(stack.db),
      ).rejects.toThrow(/is completed, which is final/);
    }
    const row = await stack.db
      .selectFrom('sessions')
      .select('status')
      .where('id', '=', sessionId)
      .executeTakeFirst();
    expect(row?.status).toBe('completed');
  });
});
