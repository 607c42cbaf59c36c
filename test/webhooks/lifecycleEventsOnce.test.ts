import { randomBytes, randomUUID } from 'node:crypto';
import { createSessionActivities } from '../../activities/sessions';
import { createDb, type Db } from '../../db/client';
import { insertSessionWithOptions, transitionSession } from '../../db/sessions';
import { testStack } from '../harness/stack';
import { createMerchant } from './fixtures';

/**
 * The lifecycle events at the database, where "at most once" and "in the same transaction" are decided:
 * concurrent or retried status changes (duplicate signals, a worker that died after the commit) store one
 * event and answer its id to every caller; session.failed is stored once per failure.
 */
const TOKEN = '0x00000000000000000000000000000000000000aa';

describe('session lifecycle events are stored once, with their status change', () => {
  let db: Db;
  let activities: ReturnType<typeof createSessionActivities>;
  beforeAll(() => {
    db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 6 });
    activities = createSessionActivities({ db });
  });
  afterAll(async () => {
    await db?.destroy();
  });

  /** An awaiting_payment session of 5 USD payable in a 6-decimals token. */
  async function createSession(): Promise<string> {
    const merchantId = await createMerchant(db);
    const id = randomUUID();
    await insertSessionWithOptions(
      db,
      {
        id,
        merchant_id: merchantId,
        amount: '5.000000',
        merchant_name: null,
        line_items: '[]',
        payment_option_symbols: ['USDC'],
        sandbox_mode: true,
        success_url: null,
        payout_address: '0x0000000000000000000000000000000000000001',
        expires_at: new Date(Date.now() + 3600_000),
      },
      [
        {
          chain_id: 84532,
          network: 'base-sepolia',
          symbol: 'USDC',
          token_address: TOKEN,
          decimals: 6,
          amount: '5000000',
          deposit_address: `0x${randomBytes(20).toString('hex')}`,
          payout_address: '0x0000000000000000000000000000000000000001',
        },
      ],
    );
    return id;
  }

  const eventsOf = (sessionId: string) =>
    db
      .selectFrom('events')
      .select(['id', 'type', 'payload'])
      .where('session_id', '=', sessionId)
      .orderBy('created_at')
      .execute();

  it('an expiry raced by duplicate calls stores one session.expired and answers its id to each', async () => {
    const id = await createSession();
    const answers = await Promise.all([1, 2, 3].map(() => activities.markSessionExpired(id)));
    const events = await eventsOf(id);
    expect(events.map((event) => event.type)).toEqual(['session.expired']);
    expect(answers.filter((answer) => answer.changed)).toHaveLength(1);
    for (const answer of answers) expect(answer.eventId).toBe(events[0]!.id);
    // A retry after the commit (the worker died before starting the deliveries) finds the same event.
    expect(await activities.markSessionExpired(id)).toEqual({ changed: false, eventId: events[0]!.id });
    const body = JSON.parse(events[0]!.payload);
    expect(body.data).toEqual({
      session: expect.objectContaining({ id, status: 'expired', amount: '5', paidAt: null, txHash: null }),
    });
  });

  it('the one-activity expiry starts the deliveries of the event its change stored, and a retry after the commit starts them for the same event', async () => {
    const id = await createSession();
    const started: { id: string; merchant_id: string; type: string }[] = [];
    const expiring = createSessionActivities({
      db,
      startEventDeliveries: async ({ id: eventId, merchant_id, type }) => {
        started.push({ id: eventId, merchant_id, type });
      },
    });
    const expiresAt = new Date().toISOString();
    const first = await expiring.expireAfterDepositScans({ sessionId: id, expiresAt });
    const retried = await expiring.expireAfterDepositScans({ sessionId: id, expiresAt });
    const events = await eventsOf(id);
    expect(events.map((event) => event.type)).toEqual(['session.expired']);
    const { merchant_id } = await db
      .selectFrom('sessions')
      .select('merchant_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(first).toEqual({ expired: { changed: true, eventId: events[0]!.id }, deliveriesStarted: true });
    expect(retried).toEqual({ expired: { changed: false, eventId: events[0]!.id }, deliveriesStarted: true });
    const event = { id: events[0]!.id, merchant_id, type: 'session.expired' };
    expect(started).toEqual([event, event]);
  });

  it('an expiry with part of the amount deposited in time is session.underpaid with what arrived; late transfers do not count', async () => {
    const id = await createSession();
    const deposit = (amount: string, kind: 'accepted' | 'late') =>
      db
        .insertInto('deposits')
        .values({
          session_id: id,
          chain_id: 84532,
          token_address: TOKEN,
          deposit_address: '0x0000000000000000000000000000000000000002',
          amount,
          tx_hash: `0x${randomBytes(32).toString('hex')}`,
          log_index: 0,
          block_number: '10',
          kind,
        })
        .execute();
    await deposit('1000000', 'accepted');
    await deposit('2345678', 'accepted');
    await deposit('1000000', 'late');
    const answer = await activities.markSessionExpired(id);
    const events = await eventsOf(id);
    expect(events.map((event) => event.type)).toEqual(['session.underpaid']);
    expect(answer).toEqual({ changed: true, eventId: events[0]!.id });
    expect(JSON.parse(events[0]!.payload).data.receivedAmount).toBe('3.345678');
  });

  it('session.failed is stored once per failure: a retried call adds none, a second failure after a repair adds one', async () => {
    const id = await createSession();
    await transitionSession(db, { id, from: ['awaiting_payment'], to: 'confirming' });
    const first = await activities.markSessionFailed({ sessionId: id, reason: 'InsufficientOutput(1, 2)' });
    expect(first.changed).toBe(true);
    expect(await activities.markSessionFailed({ sessionId: id, reason: 'InsufficientOutput(1, 2)' })).toEqual(
      {
        changed: false,
        eventId: first.eventId,
      },
    );
    await transitionSession(db, { id, from: ['failed'], to: 'confirming' });
    const second = await activities.markSessionFailed({ sessionId: id, reason: 'ExecutionReverted' });
    expect(second.changed).toBe(true);
    expect(second.eventId).not.toBe(first.eventId);
    const events = await eventsOf(id);
    expect(events.map((event) => [event.type, JSON.parse(event.payload).data.failureReason])).toEqual([
      ['session.failed', 'InsufficientOutput(1, 2)'],
      ['session.failed', 'ExecutionReverted'],
    ]);
  });

  it('no status change, no event: a session that moved on is not expired, and completion without covering settlements is refused', async () => {
    const id = await createSession();
    await transitionSession(db, { id, from: ['awaiting_payment'], to: 'confirming' });
    expect(await activities.markSessionExpired(id)).toEqual({ changed: false, eventId: null });
    await expect(activities.markSessionCompleted(id)).rejects.toThrow(/do not cover/);
    expect(await eventsOf(id)).toEqual([]);
  });

  it('the database itself admits one event of a type per session, session.failed aside', async () => {
    const id = await createSession();
    const { merchant_id } = await db
      .selectFrom('sessions')
      .select('merchant_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const event = (type: string) => ({
      id: `evt_${randomUUID()}`,
      type,
      merchant_id,
      session_id: id,
      payload: '{}',
      created_at: new Date(),
    });
    await db.insertInto('events').values(event('session.completed')).execute();
    await expect(db.insertInto('events').values(event('session.completed')).execute()).rejects.toThrow(
      /events_session_type_once/,
    );
    await db.insertInto('events').values(event('session.failed')).execute();
    await db.insertInto('events').values(event('session.failed')).execute();
    expect((await eventsOf(id)).map((row) => row.type)).toEqual([
      'session.completed',
      'session.failed',
      'session.failed',
    ]);
  });
});
