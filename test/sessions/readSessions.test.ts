import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';

describe('reading payment sessions', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  let other: SignedInMerchant;
  let sk: { authorization: string };

  beforeAll(async () => {
    app = await startTestApp();
    [merchant, other] = await Promise.all([signInNewMerchant(app), signInNewMerchant(app)]);
    sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
  });
  afterAll(() => app.close());

  async function createSession(json: object = {}) {
    const response = await app.request('/v1/sessions', {
      method: 'POST',
      headers: sk,
      json: { amount: '25.5', sandboxMode: true, ...json },
    });
    expect(response.status).toBe(201);
    return response.body as { id: string; expiresAt: string };
  }

  describe('public read GET /v1/sessions/{id}', () => {
    it('returns the session with its line items and payment options', async () => {
      const lineItems = [
        { name: 'Espresso', quantity: 3, unitPrice: '2.5', total: '7.5' },
        { name: 'Cake', quantity: 1, unitPrice: '18', total: '18' },
      ];
      const { id } = await createSession({
        merchantName: 'Corner Café',
        lineItems,
        successUrl: 'https://cafe.example/thanks',
      });
      const response = await app.request(`/v1/sessions/${id}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id,
        status: 'awaiting_payment',
        amount: '25.5',
        merchantName: 'Corner Café',
        sandboxMode: true,
        lineItems,
        successUrl: 'https://cafe.example/thanks',
      });
      expect(response.body.paymentOptions).toHaveLength(9);
      expect(response.body.paidAt).toBeUndefined();
    });

    it('defaults merchantName to the merchant profile name', async () => {
      await app.request('/v1/merchants/me', {
        method: 'PATCH',
        headers: merchant.auth,
        json: { name: 'Profile Name Ltd' },
      });
      const { id } = await createSession();
      expect((await app.request(`/v1/sessions/${id}`)).body.merchantName).toBe('Profile Name Ltd');
    });

    it('answers 404 for an unknown or malformed id, with the error body', async () => {
      for (const id of [randomUUID(), 'not-a-uuid']) {
        const response = await app.request(`/v1/sessions/${id}`);
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ statusCode: 404, message: expect.any(String), error: 'Not Found' });
        expect((await app.request(`/v1/sessions/${id}/status`)).status).toBe(404);
      }
    });
  });

  describe('status view and computed expiry', () => {
    it('GET /status answers {status, webhookDelivered}', async () => {
      const { id } = await createSession();
      const response = await app.request(`/v1/sessions/${id}/status`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'awaiting_payment', webhookDelivered: false });
    });

    it('an awaiting_payment session past expiresAt reads as expired everywhere, though no job changed the row', async () => {
      const { id } = await createSession({ expiresInSec: 60 });
      const later = await startTestApp({}, { now: () => new Date(Date.now() + 61_000) });
      try {
        expect((await later.request(`/v1/sessions/${id}/status`)).body.status).toBe('expired');
        expect((await later.request(`/v1/sessions/${id}`)).body.status).toBe('expired');
        expect(
          (await later.request(`/v1/merchants/me/sessions/${id}`, { headers: merchant.auth })).body.status,
        ).toBe('expired');
        const expiredList = await later.request('/v1/merchants/me/sessions?status=expired&limit=100', {
          headers: merchant.auth,
        });
        expect(expiredList.body.data.map((session: { id: string }) => session.id)).toContain(id);
        const awaitingList = await later.request(
          '/v1/merchants/me/sessions?status=awaiting_payment&limit=100',
          { headers: merchant.auth },
        );
        expect(awaitingList.body.data.map((session: { id: string }) => session.id)).not.toContain(id);
      } finally {
        await later.close();
      }
      const row = await app.db
        .selectFrom('sessions')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('awaiting_payment');
      expect((await app.request(`/v1/sessions/${id}/status`)).body.status).toBe('awaiting_payment');
    });
  });

  describe('dashboard list and get', () => {
    let lister: SignedInMerchant;
    let ids: string[];
    beforeAll(async () => {
      lister = await signInNewMerchant(app);
      ids = [];
      for (let index = 0; index < 5; index += 1) {
        const response = await app.request('/v1/merchants/me/sessions', {
          method: 'POST',
          headers: lister.auth,
          json: { amount: `${index + 1}`, sandboxMode: true },
        });
        ids.push(response.body.id);
      }
    });

    it('pages newest first with {data, page, limit, total}', async () => {
      const first = await app.request('/v1/merchants/me/sessions?limit=2', { headers: lister.auth });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ page: 1, limit: 2, total: 5 });
      expect(first.body.data.map((session: { id: string }) => session.id)).toEqual([ids[4], ids[3]]);
      const third = await app.request('/v1/merchants/me/sessions?limit=2&page=3', { headers: lister.auth });
      expect(third.body.data.map((session: { id: string }) => session.id)).toEqual([ids[0]]);
      const beyond = await app.request('/v1/merchants/me/sessions?limit=2&page=4', { headers: lister.auth });
      expect(beyond.body).toMatchObject({ data: [], total: 5 });
      expect(first.body.data[0]).toMatchObject({
        amount: '5',
        status: 'awaiting_payment',
        webhookDelivered: false,
        sandboxMode: true,
      });
    });

    it('defaults to page 1 of 20', async () => {
      const response = await app.request('/v1/merchants/me/sessions', { headers: lister.auth });
      expect(response.body).toMatchObject({ page: 1, limit: 20, total: 5 });
    });

    it.each(['limit=0', 'limit=101', 'limit=abc', 'page=0', 'page=-1', 'status=paid', 'limit=2.5'])(
      'answers 400 for %s',
      async (query) => {
        const response = await app.request(`/v1/merchants/me/sessions?${query}`, { headers: lister.auth });
        expect(response.status).toBe(400);
        expect(response.body.message).toMatch(/^Validation failed: /);
      },
    );

    it('another merchant sees none of them and gets 404 for their ids', async () => {
      const list = await app.request('/v1/merchants/me/sessions?limit=100', { headers: other.auth });
      expect(list.body.data.map((session: { id: string }) => session.id)).not.toEqual(
        expect.arrayContaining([ids[0]]),
      );
      for (const id of ids) {
        const response = await app.request(`/v1/merchants/me/sessions/${id}`, { headers: other.auth });
        expect(response.status).toBe(404);
      }
      const mine = await app.request(`/v1/merchants/me/sessions/${ids[0]}`, { headers: lister.auth });
      expect(mine.status).toBe(200);
      expect(mine.body.id).toBe(ids[0]);
    });
  });
});
