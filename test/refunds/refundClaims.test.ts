import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { getAddress } from 'viem';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';

/**
 * The claim link (issue 41; docs/service-contract.md "Refunds"): a refund created without an address answers
 * `claimUrl` once; the public claim API shows the payer the refund's facts and takes `{ chainId, address }`
 * once. A second submission, an expired link, a guessed or malformed token, or a canceled refund's link is
 * refused, and the refund's address never changes after the first submission.
 */

const hash = () => `0x${randomBytes(32).toString('hex')}`;
const randomAddress = () => `0x${randomBytes(20).toString('hex')}`;

interface Option {
  chainId: number;
  network: string;
  symbol: string;
  tokenAddress: string;
  depositAddress: string;
}

describe('refund claim links', () => {
  let app: TestApp;
  let sk: { authorization: string };
  let block = 500;

  beforeAll(async () => {
    app = await startTestApp();
    const merchant = await signInNewMerchant(app);
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
  });
  afterAll(() => app.close());

  /** A 10 USD session paid in USDC on its first option; swept (merchant refunds) or not (forwarder refunds). */
  async function paidSession({ swept }: { swept: boolean }) {
    const created = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '10', sandboxMode: true, merchantName: 'Tea Shop', paymentOptionSymbols: ['USDC'] },
    });
    const options: Option[] = (await app.request(`/v1/sessions/${created.body.id}`)).body.paymentOptions;
    const usdc = options[0]!;
    await app.db
      .insertInto('deposits')
      .values({
        session_id: created.body.id,
        chain_id: usdc.chainId,
        token_address: usdc.tokenAddress.toLowerCase(),
        deposit_address: usdc.depositAddress.toLowerCase(),
        amount: '10000000',
        tx_hash: hash(),
        log_index: 0,
        block_number: BigInt((block += 1)),
        kind: 'accepted',
        settled_at: swept ? new Date() : null,
      })
      .execute();
    await sql`update sessions set status = ${swept ? 'completed' : 'failed'} where id = ${created.body.id}`.execute(
      app.db,
    );
    return { id: created.body.id as string, options };
  }

  async function claimLink(sessionId: string, amount = '4') {
    const created = await app.request(`/v1/sessions/${sessionId}/refunds`, {
      method: 'POST',
      headers: sk,
      json: { amount },
    });
    expect(created.status).toBe(201);
    const token = (created.body.claimUrl as string).split('/refund/')[1]!;
    return { refundId: created.body.id as string, path: `/v1/refund-claims/${token}` };
  }

  const refundRow = (id: string) =>
    app.db.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('shows the payer the refund and takes the chain and address once; a second submission changes nothing', async () => {
    const session = await paidSession({ swept: true });
    const { refundId, path } = await claimLink(session.id);

    const shown = await app.request(path);
    expect(shown.status).toBe(200);
    const chains = session.options
      .map((option) => ({ chainId: option.chainId, network: option.network }))
      .sort((left, right) => left.chainId - right.chainId);
    expect(shown.body).toEqual({
      amount: '4',
      token: 'USDC',
      merchantName: 'Tea Shop',
      status: 'awaiting_address',
      chains,
      chainId: null,
      address: null,
      expiresAt: expect.any(String),
    });

    const badAddress = await app.request(path, {
      method: 'POST',
      json: { chainId: chains[0]!.chainId, address: '0x12' },
    });
    expect([badAddress.status, badAddress.body.errors]).toEqual([
      400,
      [{ field: 'address', message: 'must be a 0x address' }],
    ]);
    const badChain = await app.request(path, {
      method: 'POST',
      json: { chainId: 1, address: randomAddress() },
    });
    expect(badChain.status).toBe(400);
    expect(badChain.body.errors[0].field).toBe('chainId');
    expect((await refundRow(refundId)).address).toBeNull();

    const payer = randomAddress();
    const chosen = chains[chains.length - 1]!.chainId;
    const submitted = await app.request(path, { method: 'POST', json: { chainId: chosen, address: payer } });
    expect(submitted.status).toBe(200);
    expect(submitted.body).toMatchObject({
      status: 'awaiting_payment',
      chainId: chosen,
      address: getAddress(payer),
    });

    const option = session.options.find((candidate) => candidate.chainId === chosen)!;
    const read = await app.request(`/v1/sessions/${session.id}/refunds/${refundId}`, { headers: sk });
    expect(read.body).toMatchObject({
      status: 'awaiting_payment',
      address: getAddress(payer),
      chainId: chosen,
      transfer: {
        chainId: chosen,
        tokenAddress: getAddress(option.tokenAddress),
        to: getAddress(payer),
        amount: '4000000',
      },
    });

    const again = await app.request(path, {
      method: 'POST',
      json: { chainId: chosen, address: randomAddress() },
    });
    expect([again.status, again.body.message]).toEqual([409, 'This refund already has its address']);
    expect((await refundRow(refundId)).address).toBe(getAddress(payer));
  });

  it('lets exactly one of two submissions sent at once through', async () => {
    const session = await paidSession({ swept: true });
    const { refundId, path } = await claimLink(session.id);
    const chainId = session.options[0]!.chainId;
    const [first, second] = [randomAddress(), randomAddress()];
    const answers = await Promise.all(
      [first, second].map((address) => app.request(path, { method: 'POST', json: { chainId, address } })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const winner = answers[0]!.status === 200 ? first : second;
    expect((await refundRow(refundId)).address).toBe(getAddress(winner));
  });

  it('offers only the forwarder’s chain for money still in the forwarder', async () => {
    const session = await paidSession({ swept: false });
    const { refundId, path } = await claimLink(session.id);
    const row = await refundRow(refundId);
    expect(row.source).toBe('forwarder');
    const shown = await app.request(path);
    expect(shown.body.chains.map((chain: { chainId: number }) => chain.chainId)).toEqual([row.chain_id]);
    const other = session.options.find((option) => option.chainId !== row.chain_id)!;
    const refused = await app.request(path, {
      method: 'POST',
      json: { chainId: other.chainId, address: randomAddress() },
    });
    expect([refused.status, refused.body.errors]).toEqual([
      400,
      [{ field: 'chainId', message: `must be one of: ${row.chain_id}` }],
    ]);
    const accepted = await app.request(path, {
      method: 'POST',
      json: { chainId: row.chain_id, address: randomAddress() },
    });
    expect(accepted.body.status).toBe('awaiting_authorization');
  });

  it('refuses an expired, guessed, malformed or canceled link, and changes nothing', async () => {
    const session = await paidSession({ swept: true });
    const expired = await claimLink(session.id, '1');
    await sql`update refunds set claim_expires_at = now() - interval '1 second' where id = ${expired.refundId}`.execute(
      app.db,
    );
    const chainId = session.options[0]!.chainId;
    expect((await app.request(expired.path)).status).toBe(410);
    const late = await app.request(expired.path, {
      method: 'POST',
      json: { chainId, address: randomAddress() },
    });
    expect([late.status, late.body.message]).toEqual([410, 'This refund link has expired']);
    expect((await refundRow(expired.refundId)).address).toBeNull();

    const guessed = `/v1/refund-claims/${randomBytes(32).toString('base64url')}`;
    expect((await app.request(guessed)).status).toBe(404);
    const guessedPost = await app.request(guessed, {
      method: 'POST',
      json: { chainId, address: randomAddress() },
    });
    expect([guessedPost.status, guessedPost.body.message]).toEqual([404, 'Refund link not found']);
    expect((await app.request('/v1/refund-claims/short')).status).toBe(404);

    const canceled = await claimLink(session.id, '1');
    await app.request(`/v1/sessions/${session.id}/refunds/${canceled.refundId}/cancel`, {
      method: 'POST',
      headers: sk,
    });
    expect(
      (await app.request(canceled.path, { method: 'POST', json: { chainId, address: randomAddress() } }))
        .status,
    ).toBe(404);
    expect(await refundRow(canceled.refundId)).toMatchObject({ status: 'canceled', address: null });
  });
});
