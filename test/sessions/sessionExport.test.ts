import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { sessionExportPages } from '../../db/sessionExport';
import { toBaseUnits } from '../../money/baseUnits';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';

/**
 * GET /v1/sessions/export (SK) and /v1/merchants/me/sessions/export (JWT): the merchant's sessions of a
 * UTC date range as CSV, one row per session with its deposits, settlements and refunds, never another merchant's;
 * bad from/to/format answer 400 with field errors; the rows are read in keyset pages and streamed.
 */
const HEADER =
  'id,createdAt,status,amount,receivedAmount,settledAmount,chainId,token,depositTxHashes,settlementTxHashes,susdeShares,refundedAmount,refunds';
// Sandbox sessions get testnet options only: the fixture's option on mainnet's id is the session's one there.
const CHAIN_ID = 1;

const hash = () => `0x${randomBytes(32).toString('hex')}`;
const address = () => `0x${randomBytes(20).toString('hex')}`;

describe('payments export', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  let sk: { authorization: string };
  let other: { authorization: string };

  beforeAll(async () => {
    app = await startTestApp();
    merchant = await signInNewMerchant(app);
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
    other = { authorization: `Bearer ${await createApiKey(app, await signInNewMerchant(app))}` };
  });
  afterAll(() => app.close());

  async function createSession(headers: { authorization: string }, amount: string): Promise<string> {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers,
      json: { amount, sandboxMode: true },
    });
    expect(created.status).toBe(201);
    return created.body.id;
  }

  /** A USDC (or USDe) option of the session, as session creation stores one. */
  async function addOption(sessionId: string, decimals = 6) {
    const token = address();
    await app.db
      .insertInto('payment_options')
      .values({
        session_id: sessionId,
        chain_id: CHAIN_ID,
        network: 'ethereum',
        symbol: decimals === 6 ? 'USDC' : 'USDe',
        token_address: token,
        decimals,
        amount: '1',
        deposit_address: address(),
        payout_address: address(),
        session_expires_at: new Date(Date.now() + 3_600_000),
      })
      .execute();
    return token.toLowerCase();
  }

  /** A transfer the deposit monitor recorded into that option. */
  async function addDeposit(
    sessionId: string,
    token: string,
    amount: bigint,
    kind: 'accepted' | 'late',
    block: number,
  ) {
    const txHash = hash();
    await app.db
      .insertInto('deposits')
      .values({
        session_id: sessionId,
        chain_id: CHAIN_ID,
        token_address: token,
        deposit_address: address(),
        amount: amount.toString(),
        tx_hash: txHash,
        log_index: 0,
        block_number: BigInt(block),
        kind,
      })
      .execute();
    return txHash;
  }

  async function exportCsv(query: string, headers: { authorization: string } = sk) {
    return app.request(`/v1/sessions/export${query}`, { headers });
  }

  const today = () => new Date().toISOString().slice(0, 10);
  const rowsOf = (text: string) => text.split('\r\n').filter((line) => line !== '');

  it('answers one row per session of that merchant with its received, settled, chain, token, transactions and shares', async () => {
    const paid = await createSession(sk, '25');
    const unpaid = await createSession(sk, '3.5');
    const foreign = await createSession(other, '9');
    const usdc = await addOption(paid);
    const first = await addDeposit(paid, usdc, 25_000_000n, 'accepted', 10);
    const late = await addDeposit(paid, usdc, 5_000_001n, 'late', 12);
    const flush = hash();
    const delivery = hash();
    await app.db
      .insertInto('settlements')
      .values({
        session_id: paid,
        chain_id: CHAIN_ID,
        token_address: usdc,
        forwarder_address: address(),
        flush_tx_hash: flush,
        amount_in: '30000001',
        usde_amount: '30000001000000000000',
        bridged: true,
        shares: '29123456789012345678',
        delivery_chain_id: 11155111,
        delivery_tx_hash: delivery,
      })
      .execute();
    await sql`update sessions set status = 'completed', paid_chain_id = ${CHAIN_ID}, settled_amount = 30.000001 where id = ${paid}`.execute(
      app.db,
    );

    const response = await exportCsv(`?from=${today()}&to=${today()}&format=csv`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="sessions-${today()}-${today()}.csv"`,
    );
    const [header, ...rows] = rowsOf(response.text);
    expect(header).toBe(HEADER);
    const byId = new Map(rows.map((row) => [row.split(',')[0], row.split(',')]));
    expect(byId.has(foreign)).toBe(false);
    expect(rows.every((row) => !row.includes(foreign))).toBe(true);
    const created = await app.db
      .selectFrom('sessions')
      .select(['id', 'created_at'])
      .where('id', 'in', [paid, unpaid])
      .execute();
    const createdAt = new Map(created.map((row) => [row.id, row.created_at.toISOString()]));
    expect(byId.get(paid)).toEqual([
      paid,
      createdAt.get(paid),
      'completed',
      '25',
      '30.000001',
      '30.000001',
      String(CHAIN_ID),
      'USDC',
      `${first};${late}`,
      delivery,
      '29.123456789012345678',
      '0',
      '',
    ]);
    expect(byId.get(unpaid)).toEqual([
      unpaid,
      createdAt.get(unpaid),
      'awaiting_payment',
      '3.5',
      '0',
      '0',
      '',
      '',
      '',
      '',
      '0',
      '0',
      '',
    ]);
    // Oldest first.
    expect(rows.map((row) => row.split(',')[0]).filter((id) => id === paid || id === unpaid)).toEqual([
      paid,
      unpaid,
    ]);

    // The dashboard's route answers the same rows for the signed-in merchant.
    const viaJwt = await app.request(`/v1/merchants/me/sessions/export?from=${today()}&to=${today()}`, {
      headers: merchant.auth,
    });
    expect(viaJwt.status).toBe(200);
    expect(viaJwt.text).toBe(response.text);

    // The other merchant's export holds its own session and none of these.
    const theirs = await exportCsv(`?from=${today()}&to=${today()}`, other);
    expect(theirs.text).toContain(foreign);
    expect(theirs.text).not.toContain(paid);
    expect(theirs.text).not.toContain(unpaid);
  });

  it('sums tokens of different decimals exactly', async () => {
    const session = await createSession(sk, '1');
    const usde = await addOption(session, 18);
    await addDeposit(session, usde, 1_000_000_000_000_000_001n, 'accepted', 20);
    const response = await exportCsv(`?from=${today()}&to=${today()}`);
    const row = rowsOf(response.text)
      .find((line) => line.startsWith(session))!
      .split(',');
    expect(row[4]).toBe('1.000000000000000001');
    expect((await app.request(`/v1/sessions/${session}`)).body.receivedAmount).toBe('1.000000000000000001');
  });

  it('lists every refund of a session and what the succeeded ones paid back', async () => {
    const session = await createSession(sk, '10');
    const usdc = await addOption(session);
    await addDeposit(session, usdc, 10_000_000n, 'accepted', 30);
    await sql`update sessions set status = 'completed' where id = ${session}`.execute(app.db);
    const payer = address();
    const refundTx = hash();
    const refund = (amount: string, status: string, extra: Record<string, unknown> = {}) =>
      app.db
        .insertInto('refunds')
        .values({
          id: randomUUID(),
          merchant_id: merchant.merchantId,
          session_id: session,
          amount,
          status: status as 'succeeded',
          source: 'merchant',
          chain_id: CHAIN_ID,
          token_symbol: 'USDC',
          token_address: usdc,
          token_decimals: 6,
          amount_units: toBaseUnits(amount, 6).toString(),
          address: payer,
          ...extra,
        })
        .returning(['id', 'created_at'])
        .executeTakeFirstOrThrow();
    const paid = await refund('2.5', 'succeeded', { tx_hash: refundTx, succeeded_at: new Date() });
    const pending = await refund('1.25', 'awaiting_payment', { created_at: new Date(Date.now() + 1000) });
    const canceled = await refund('3', 'canceled', {
      canceled_at: new Date(),
      created_at: new Date(Date.now() + 2000),
    });
    const row = rowsOf((await exportCsv(`?from=${today()}&to=${today()}`)).text)
      .find((line) => line.startsWith(session))!
      .split(',');
    expect(row.slice(-2)).toEqual([
      '2.5',
      `${paid.id}:succeeded:2.5:${refundTx};${pending.id}:awaiting_payment:1.25:;${canceled.id}:canceled:3:`,
    ]);
  });

  it('a range with no session answers the header alone', async () => {
    const response = await exportCsv('?from=2020-01-01&to=2020-01-31');
    expect(response.status).toBe(200);
    expect(response.text).toBe(`${HEADER}\r\n`);
  });

  it.each([
    ['no from or to', '', ['from', 'to']],
    ['a malformed from', `?from=yesterday&to=2026-01-01`, ['from']],
    ['an impossible date', `?from=2026-02-30&to=2026-03-01`, ['from']],
    ['from after to', `?from=2026-03-02&to=2026-03-01`, ['from']],
    ['more than 366 days', `?from=2025-01-01&to=2026-01-02`, ['to']],
    ['a format other than csv', `?from=2026-01-01&to=2026-01-02&format=json`, ['format']],
  ])('%s answers 400 with field errors', async (_case, query, fields) => {
    for (const response of [
      await exportCsv(query),
      await app.request(`/v1/merchants/me/sessions/export${query}`, { headers: merchant.auth }),
    ]) {
      expect(response.status).toBe(400);
      expect(response.body.message).toEqual(expect.any(String));
      expect(response.body.errors.map((error: { field: string }) => error.field).sort()).toEqual(fields);
    }
  });

  it('asks for a credential: no key 401, and /sessions/export is not taken for a session id', async () => {
    expect((await app.request(`/v1/sessions/export?from=${today()}&to=${today()}`)).status).toBe(401);
    expect((await app.request(`/v1/merchants/me/sessions/export?from=${today()}&to=${today()}`)).status).toBe(
      401,
    );
  });

  it('reads the sessions in keyset pages and streams them: every one of many rows, each once, oldest first', async () => {
    const bulk = await signInNewMerchant(app);
    const bulkKey = { authorization: `Bearer ${await createApiKey(app, bulk)}` };
    const count = 2_345;
    // Same created_at for runs of rows, so the keyset's id tie-break is exercised.
    await sql`
      insert into sessions (id, merchant_id, amount, line_items, payment_option_symbols, sandbox_mode, payout_address, expires_at, created_at)
      select gen_random_uuid(), ${bulk.merchantId}, 1, '[]', '{USDC}', true, ${address()},
             now() + interval '1 hour', date_trunc('day', now()) + (n / 7) * interval '1 second'
      from generate_series(1, ${count}) n`.execute(app.db);

    const pages: number[] = [];
    const seen: string[] = [];
    for await (const page of sessionExportPages(
      app.db,
      {
        merchantId: bulk.merchantId,
        from: new Date(`${today()}T00:00:00Z`),
        toExclusive: new Date(Date.now() + 86_400_000),
      },
      500,
    )) {
      pages.push(page.length);
      seen.push(...page.map((row) => row.session.id));
    }
    expect(pages).toEqual([500, 500, 500, 500, 345]);
    expect(new Set(seen).size).toBe(count);

    const response = await fetch(`${app.baseUrl}/v1/sessions/export?from=${today()}&to=${today()}`, {
      headers: bulkKey,
    });
    expect(response.status).toBe(200);
    // Streamed: no length known up front, sent in chunks as pages are read.
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    const rows = rowsOf(await response.text()).slice(1);
    expect(rows.map((row) => row.split(',')[0])).toEqual(seen);
  });
});
