import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { getAddress } from 'viem';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';

/**
 * The refund resource (issue 41; docs/service-contract.md "Refunds") over HTTP with both credentials: create, list, read, cancel;
 * the session reads' refunded and refundable amounts; money safety (never above what the session received,
 * not even for two requests racing for the last dollar; another merchant's session is unknown; a bad address
 * is named); the source decided by where the money is; Idempotency-Key. Sessions are paid by writing the
 * deposits and settlements the monitor and the settlement would record (the chain flows are in
 * merchantPaidRefund.test.ts).
 */

const hash = () => `0x${randomBytes(32).toString('hex')}`;
const randomAddress = () => `0x${randomBytes(20).toString('hex')}`;

interface Option {
  chainId: number;
  symbol: string;
  tokenAddress: string;
  depositAddress: string;
}

describe('refunds', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  let sk: { authorization: string };
  let otherSk: { authorization: string };
  let other: SignedInMerchant;
  let block = 100;

  beforeAll(async () => {
    app = await startTestApp();
    merchant = await signInNewMerchant(app);
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
    other = await signInNewMerchant(app);
    otherSk = { authorization: `Bearer ${await createApiKey(app, other)}` };
  });
  afterAll(() => app.close());

  async function createSession(amount: string, headers = sk): Promise<{ id: string; usdc: Option }> {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers,
      json: { amount, sandboxMode: true, paymentOptionSymbols: ['USDC'] },
    });
    expect(created.status).toBe(201);
    const read = await app.request(`/v1/sessions/${created.body.id}`);
    return { id: created.body.id, usdc: read.body.paymentOptions[0] };
  }

  /** A transfer as the deposit monitor records it. */
  async function deposit(
    sessionId: string,
    option: Option,
    units: bigint,
    kind: 'accepted' | 'late' = 'accepted',
  ) {
    await app.db
      .insertInto('deposits')
      .values({
        session_id: sessionId,
        chain_id: option.chainId,
        token_address: option.tokenAddress.toLowerCase(),
        deposit_address: option.depositAddress.toLowerCase(),
        amount: units.toString(),
        tx_hash: hash(),
        log_index: 0,
        block_number: BigInt((block += 1)),
        kind,
      })
      .execute();
  }

  /** A session paid and swept to the payout address, as the settlement leaves it. */
  async function completedSession(amount: string, paidUnits: bigint) {
    const session = await createSession(amount);
    await deposit(session.id, session.usdc, paidUnits);
    await sql`update deposits set settled_at = now() where session_id = ${session.id}`.execute(app.db);
    await sql`update sessions set status = 'completed', paid_chain_id = ${session.usdc.chainId},
      settled_amount = ${amount} where id = ${session.id}`.execute(app.db);
    return session;
  }

  /** A session that expired with part of the amount in its forwarder (not swept). */
  async function expiredWithPartialDeposit(amount: string, paidUnits: bigint) {
    const session = await createSession(amount);
    await deposit(session.id, session.usdc, paidUnits);
    await sql`update sessions set status = 'expired' where id = ${session.id}`.execute(app.db);
    return session;
  }

  const refundsOf = (sessionId: string) =>
    app.db.selectFrom('refunds').selectAll().where('session_id', '=', sessionId).execute();

  const refund = (sessionId: string, json: object, headers: Record<string, string> = sk) =>
    app.request(`/v1/sessions/${sessionId}/refunds`, { method: 'POST', headers, json });

  it('refunds all that is refundable of a settled session, paid by the merchant, and the reads add it up', async () => {
    const session = await completedSession('25', 30_000_001n);
    const payer = randomAddress();
    const created = await refund(session.id, { address: payer, reason: 'order canceled' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      sessionId: session.id,
      amount: '30.000001',
      reason: 'order canceled',
      status: 'awaiting_payment',
      source: 'merchant',
      claimUrl: null,
      address: getAddress(payer),
      chainId: session.usdc.chainId,
      token: 'USDC',
      txHash: null,
      failureReason: null,
      transfer: {
        chainId: session.usdc.chainId,
        tokenAddress: getAddress(session.usdc.tokenAddress),
        to: getAddress(payer),
        amount: '30000001',
      },
      authorization: null,
      createdAt: expect.any(String),
    });
    const [row] = await refundsOf(session.id);
    expect(row).toMatchObject({
      amount: '30.000001',
      amount_units: '30000001',
      token_address: session.usdc.tokenAddress.toLowerCase(),
      token_decimals: 6,
      merchant_id: merchant.merchantId,
    });

    const publicRead = await app.request(`/v1/sessions/${session.id}`);
    expect(publicRead.body).toMatchObject({
      receivedAmount: '30.000001',
      refundedAmount: '0',
      refundableAmount: '0',
    });
    const list = await app.request(`/v1/sessions/${session.id}/refunds`, { headers: sk });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([{ ...created.body }]);
    const read = await app.request(`/v1/sessions/${session.id}/refunds/${created.body.id}`, { headers: sk });
    expect(read.body).toEqual(created.body);

    // Once it succeeded, it counts as refunded on both views that carry amounts.
    await sql`update refunds set status = 'succeeded', tx_hash = ${hash()}, succeeded_at = now()
      where id = ${created.body.id}`.execute(app.db);
    const summary = await app.request(`/v1/merchants/me/sessions/${session.id}`, { headers: merchant.auth });
    expect(summary.body).toMatchObject({
      receivedAmount: '30.000001',
      refundedAmount: '30.000001',
      refundableAmount: '0',
    });
    const page = await app.request('/v1/merchants/me/sessions?limit=100', { headers: merchant.auth });
    expect(page.body.data.find((item: { id: string }) => item.id === session.id)).toMatchObject({
      refundedAmount: '30.000001',
      refundableAmount: '0',
    });

    const nothingLeft = await refund(session.id, {});
    expect(nothingLeft.status).toBe(409);
    expect(nothingLeft.body.message).toBe('Nothing left to refund on this session');
  });

  it('refunds from the forwarder what was not swept, through a claim link whose token is stored hashed', async () => {
    const session = await expiredWithPartialDeposit('25', 10_000_000n);
    const created = await refund(session.id, {});
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      amount: '10',
      status: 'awaiting_address',
      source: 'forwarder',
      address: null,
      chainId: session.usdc.chainId,
      token: 'USDC',
    });
    const claimUrl: string = created.body.claimUrl;
    expect(claimUrl).toMatch(new RegExp(`^${app.config.PUBLIC_BASE_URL}/refund/[A-Za-z0-9_-]{43}$`));
    const token = claimUrl.split('/refund/')[1]!;
    const [row] = await refundsOf(session.id);
    expect(row!.claim_token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(token);
    const stored = await app.db.selectFrom('idempotency_keys').select('response_body').execute();
    expect(JSON.stringify(stored)).not.toContain(token);
    // Reads never show the link again.
    const read = await app.request(`/v1/sessions/${session.id}/refunds/${created.body.id}`, { headers: sk });
    expect(read.body.claimUrl).toBeNull();

    // With the address given, a forwarder refund waits for the payout address's authorization.
    const second = await expiredWithPartialDeposit('25', 2_000_000n);
    const authorized = await refund(second.id, { address: randomAddress(), amount: '1.5' });
    expect(authorized.body).toMatchObject({ status: 'awaiting_authorization', source: 'forwarder' });
  });

  it('refuses an amount above what is refundable, and saves nothing', async () => {
    const session = await completedSession('10', 10_000_000n);
    const above = await refund(session.id, { amount: '10.000001', address: randomAddress() });
    expect(above.status).toBe(400);
    expect(above.body.errors).toEqual([
      { field: 'amount', message: 'must be at most the session’s refundable amount (10)' },
    ]);
    expect(await refundsOf(session.id)).toEqual([]);

    const topup = await app.request('/v1/merchants/me/balance/topups', {
      method: 'POST',
      headers: merchant.auth,
      json: { amount: '5' },
    });
    expect(topup.status).toBe(201);
    const topupRefund = await refund(topup.body.sessionId, { amount: '1' });
    expect([topupRefund.status, topupRefund.body.message]).toEqual([
      409,
      'A prepaid balance top-up is not refunded',
    ]);

    const unpaid = await createSession('5');
    const nothing = await refund(unpaid.id, { amount: '1' });
    expect(nothing.status).toBe(409);
    expect(nothing.body.message).toBe(
      'Session is still being paid or settled; refund it once it is completed, expired or failed',
    );
    expect(await refundsOf(unpaid.id)).toEqual([]);
  });

  it('answers 404 for another merchant’s session and refund, with either credential', async () => {
    const session = await completedSession('10', 10_000_000n);
    const mine = await refund(session.id, { amount: '1', address: randomAddress() });
    expect(mine.status).toBe(201);
    const paths = [
      ['POST', `/v1/sessions/${session.id}/refunds`, otherSk],
      ['GET', `/v1/sessions/${session.id}/refunds`, otherSk],
      ['GET', `/v1/sessions/${session.id}/refunds/${mine.body.id}`, otherSk],
      ['POST', `/v1/sessions/${session.id}/refunds/${mine.body.id}/cancel`, otherSk],
      ['POST', `/v1/merchants/me/sessions/${session.id}/refunds`, other.auth],
      ['GET', `/v1/merchants/me/sessions/${session.id}/refunds/${mine.body.id}`, other.auth],
      ['POST', `/v1/merchants/me/sessions/${session.id}/refunds/${mine.body.id}/cancel`, other.auth],
    ] as const;
    for (const [method, path, headers] of paths) {
      const response = await app.request(path, {
        method,
        headers,
        ...(method === 'POST' && { json: path.endsWith('/refunds') ? { amount: '1' } : {} }),
      });
      expect([path, response.status]).toEqual([path, 404]);
    }
    const [row, ...none] = await refundsOf(session.id);
    expect(none).toEqual([]);
    expect(row!.status).toBe('awaiting_payment');
  });

  it('answers 400 naming the field for a bad address, chain or amount', async () => {
    const session = await completedSession('10', 10_000_000n);
    const options: Option[] = (await app.request(`/v1/sessions/${session.id}`)).body.paymentOptions;
    const chains = options.map((option) => option.chainId).sort((left, right) => left - right);
    const cases = [
      [{ address: '0x1234' }, 'address', 'must be a 0x address'],
      [{ address: 'not an address' }, 'address', 'must be a 0x address'],
      [{ amount: '1.0000001' }, 'amount', 'must have at most 6 decimals'],
      [{ amount: 1 }, 'amount', 'must be a decimal string'],
      [{ chainId: 999 }, 'chainId', `must be a chain the session offers USDC on: ${chains.join(', ')}`],
    ] as const;
    for (const [json, field, message] of cases) {
      const response = await refund(session.id, json);
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([{ field, message }]);
      expect(response.body.message).toContain(field);
    }
    expect(await refundsOf(session.id)).toEqual([]);
  });

  it('lets exactly one of the refunds racing for the last refundable dollar succeed', async () => {
    const session = await completedSession('5', 5_000_000n);
    const first = await refund(session.id, { amount: '4', address: randomAddress() });
    expect(first.status).toBe(201);
    // Several rounds of requests sent at once, half with each credential: each round exactly one wins.
    for (let round = 0; round < 5; round += 1) {
      const racers = await Promise.all(
        [sk, merchant.auth, sk, merchant.auth, sk, merchant.auth].map((headers) =>
          app.request(`${headers === sk ? '/v1' : '/v1/merchants/me'}/sessions/${session.id}/refunds`, {
            method: 'POST',
            headers,
            json: { amount: '1', address: randomAddress() },
          }),
        ),
      );
      expect(racers.map((response) => response.status).sort()).toEqual([201, 400, 400, 400, 400, 400]);
      for (const loser of racers.filter((response) => response.status === 400))
        expect(loser.body.errors).toEqual([
          { field: 'amount', message: 'must be at most the session’s refundable amount (0)' },
        ]);
      // Give the dollar back for the next round.
      const winner = racers.find((response) => response.status === 201)!;
      const canceled = await app.request(`/v1/sessions/${session.id}/refunds/${winner.body.id}/cancel`, {
        method: 'POST',
        headers: sk,
      });
      expect(canceled.body.status).toBe('canceled');
    }
    const live = (await refundsOf(session.id)).filter((row) => row.status !== 'canceled');
    expect(live.map((row) => row.amount)).toEqual(['4.000000']);
  });

  it('adds partial refunds up, never above what was received, late money included', async () => {
    const session = await completedSession('10', 10_000_000n);
    // 2.5 more arrived after completion and is still in the forwarder.
    await deposit(session.id, session.usdc, 2_500_000n, 'late');
    const amounts = ['3', '2.25', '4.75'];
    for (const amount of amounts) {
      const created = await refund(session.id, { amount, address: randomAddress() });
      expect(created.status).toBe(201);
    }
    const read = await app.request(`/v1/sessions/${session.id}`);
    expect(read.body).toMatchObject({ receivedAmount: '12.5', refundableAmount: '2.5' });
    const rows = await refundsOf(session.id);
    // The late 2.5 is refundable from the forwarder; the first refunds exceeded it and fell to the merchant.
    expect(rows.map((row) => [row.amount, row.source]).sort()).toEqual([
      ['2.250000', 'forwarder'],
      ['3.000000', 'merchant'],
      ['4.750000', 'merchant'],
    ]);
    const rest = await refund(session.id, { address: randomAddress() });
    expect(rest.body).toMatchObject({ amount: '2.5', source: 'merchant' });
    expect((await refund(session.id, { amount: '0.000001' })).status).toBe(400);
    const total = (await refundsOf(session.id)).reduce((sum, row) => sum + BigInt(row.amount_units!), 0n);
    expect(total).toBe(12_500_000n);
  });

  it('cancels while nothing moved, gives the amount back, and refuses once it is processing', async () => {
    const session = await completedSession('10', 10_000_000n);
    const created = await app.request(`/v1/merchants/me/sessions/${session.id}/refunds`, {
      method: 'POST',
      headers: merchant.auth,
      json: { amount: '6', address: randomAddress() },
    });
    expect(created.status).toBe(201);
    const cancel = (id: string) =>
      app.request(`/v1/merchants/me/sessions/${session.id}/refunds/${id}/cancel`, {
        method: 'POST',
        headers: merchant.auth,
      });
    const canceled = await cancel(created.body.id);
    expect(canceled.status).toBe(200);
    expect(canceled.body.status).toBe('canceled');
    expect((await cancel(created.body.id)).body.status).toBe('canceled');
    expect((await app.request(`/v1/sessions/${session.id}`)).body.refundableAmount).toBe('10');

    const moving = await refund(session.id, { amount: '10', address: randomAddress() });
    await sql`update refunds set status = 'processing', tx_hash = ${hash()} where id = ${moving.body.id}`.execute(
      app.db,
    );
    const refused = await cancel(moving.body.id);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe('Refund is processing: it can no longer be canceled');
    expect((await refundsOf(session.id)).find((row) => row.id === moving.body.id)!.status).toBe('processing');
  });

  it('honours Idempotency-Key: the same request answers the same refund, another body 409', async () => {
    const session = await completedSession('10', 10_000_000n);
    const key = `refund-${randomBytes(8).toString('hex')}`;
    const headers = { ...sk, 'idempotency-key': key };
    const json = { amount: '4', address: randomAddress() };
    const [first, again] = [await refund(session.id, json, headers), await refund(session.id, json, headers)];
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body).toEqual(first.body);
    const concurrent = await Promise.all(
      [1, 2, 3].map(() =>
        refund(
          session.id,
          { ...json, amount: '5' },
          {
            ...sk,
            'idempotency-key': `${key}-race`,
          },
        ),
      ),
    );
    expect(
      concurrent.map((response) => [response.status, response.body.id ?? response.body.message]),
    ).toEqual([1, 2, 3].map(() => [201, concurrent[0]!.body.id]));
    expect((await refundsOf(session.id)).map((row) => row.amount).sort()).toEqual(['4.000000', '5.000000']);
    const changed = await refund(session.id, { ...json, amount: '1' }, headers);
    expect(changed.status).toBe(409);
    expect(changed.body.message).toBe('Idempotency-Key was already used with a different request body');

    // A repeated claim-link refund answers a fresh link (the first token was never stored); the old one is void.
    const claimKey = { ...sk, 'idempotency-key': `${key}-claim` };
    const claimFirst = await refund(session.id, { amount: '1' }, claimKey);
    const claimAgain = await refund(session.id, { amount: '1' }, claimKey);
    expect(claimAgain.body.id).toBe(claimFirst.body.id);
    expect(claimAgain.body.claimUrl).toMatch(/\/refund\//);
    expect(claimAgain.body.claimUrl).not.toBe(claimFirst.body.claimUrl);
    const [row] = await app.db
      .selectFrom('refunds')
      .select('claim_token_hash')
      .where('id', '=', claimFirst.body.id)
      .execute();
    const tokenOf = (url: string) => createHash('sha256').update(url.split('/refund/')[1]!).digest('hex');
    expect(row!.claim_token_hash).toBe(tokenOf(claimAgain.body.claimUrl));
  });

  it('pays refunds of a session created with refundAddress there, without a claim link; a bad one is 400', async () => {
    const payer = randomAddress();
    const bad = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '5', sandboxMode: true, refundAddress: '0x1234' },
    });
    expect([bad.status, bad.body.message]).toEqual([400, expect.stringContaining('refundAddress')]);

    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '5', sandboxMode: true, paymentOptionSymbols: ['USDC'], refundAddress: payer },
    });
    expect(created.status).toBe(201);
    const usdc = (await app.request(`/v1/sessions/${created.body.id}`)).body.paymentOptions[0];
    await deposit(created.body.id, usdc, 5_000_000n);
    await sql`update deposits set settled_at = now() where session_id = ${created.body.id}`.execute(app.db);
    await sql`update sessions set status = 'completed', paid_chain_id = ${usdc.chainId},
      settled_amount = '5' where id = ${created.body.id}`.execute(app.db);

    const refunded = await refund(created.body.id, { amount: '2' });
    expect(refunded.status).toBe(201);
    expect(refunded.body).toMatchObject({
      status: 'awaiting_payment',
      source: 'merchant',
      address: getAddress(payer),
      claimUrl: null,
      transfer: { to: getAddress(payer), amount: '2000000' },
    });
    expect((await refundsOf(created.body.id))[0]!.claim_token_hash).toBeNull();
    // An address in the refund itself still wins.
    const elsewhere = randomAddress();
    const named = await refund(created.body.id, { amount: '1', address: elsewhere });
    expect(named.body).toMatchObject({ address: getAddress(elsewhere), claimUrl: null });

    // Without refundAddress a refund without an address still waits for the payer's claim.
    const plain = await completedSession('3', 3_000_000n);
    const claimed = await refund(plain.id, {});
    expect(claimed.body).toMatchObject({ status: 'awaiting_address', address: null });
    expect(claimed.body.claimUrl).toMatch(/\/refund\//);
  });
});
