import { randomUUID } from 'node:crypto';
import { insertSessionEventOnce } from '../../db/events';
import { openWebhookDelivery, recordWebhookAttempt } from '../../db/webhookDeliveries';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { createConfirmingSession } from './fixtures';
import { ENDPOINT_DISABLING } from '../../webhooks/endpointDisabling';

/** Webhook endpoint management on both route sets (SPEC: Webhook endpoints), against the real app and database. */
const SUMMARY_KEYS = [
  'createdAt',
  'description',
  'disabledAt',
  'disabledReason',
  'enabled',
  'events',
  'id',
  'updatedAt',
  'url',
];
const ROUTE_SETS = [
  { name: 'dashboard (JWT)', base: '/v1/merchants/me/webhooks', credential: 'jwt' },
  { name: 'API key (SK)', base: '/v1/webhooks', credential: 'sk' },
] as const;

interface Merchant extends SignedInMerchant {
  sk: { authorization: string };
}

describe('webhook endpoints', () => {
  let app: TestApp;
  const secrets = createWebhookSecretBox(developmentWebhookSecretKey());

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  async function newMerchant(): Promise<Merchant> {
    const merchant = await signInNewMerchant(app);
    return { ...merchant, sk: { authorization: `Bearer ${await createApiKey(app, merchant)}` } };
  }

  const headersFor = (merchant: Merchant, credential: 'jwt' | 'sk') =>
    credential === 'jwt' ? merchant.auth : merchant.sk;

  describe.each(ROUTE_SETS)('$name under $base', ({ base, credential }) => {
    let merchant: Merchant;
    let headers: Record<string, string>;
    beforeAll(async () => {
      merchant = await newMerchant();
      headers = headersFor(merchant, credential);
    });

    it('creates an endpoint: 201 with the whsec_ secret once, defaults applied, secret stored only encrypted', async () => {
      const created = await app.request(base, {
        method: 'POST',
        headers,
        json: { url: 'https://hooks.example.com/stablepay', description: 'shop' },
      });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual([...SUMMARY_KEYS, 'secret'].sort());
      expect(created.body).toMatchObject({
        url: 'https://hooks.example.com/stablepay',
        description: 'shop',
        events: ['session.confirming'],
        enabled: true,
      });
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
      expect(created.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

      const row = await app.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', created.body.id)
        .executeTakeFirstOrThrow();
      expect(row.secret_ciphertext).not.toContain(created.body.secret);
      expect(row.secret_ciphertext).not.toContain(created.body.secret.slice('whsec_'.length));
      expect(secrets.open(row.secret_ciphertext, row.id)).toBe(created.body.secret);
      expect(app.logLines.join('\n')).not.toContain(created.body.secret);
    });

    it('lists, reads and updates without ever returning the secret', async () => {
      const created = await app.request(base, {
        method: 'POST',
        headers,
        json: { url: 'https://a.example.com/hook', enabled: false },
      });
      const id = created.body.id;

      const list = await app.request(base, { headers });
      expect(list.status).toBe(200);
      expect(list.body.data.map((endpoint: { id: string }) => endpoint.id)).toContain(id);
      for (const endpoint of list.body.data) expect(Object.keys(endpoint).sort()).toEqual(SUMMARY_KEYS);

      const read = await app.request(`${base}/${id}`, { headers });
      expect(read.status).toBe(200);
      const { secret: _shownOnce, ...summary } = created.body;
      expect(read.body).toEqual(summary);

      const patched = await app.request(`${base}/${id}`, {
        method: 'PATCH',
        headers,
        json: { url: 'https://b.example.com/hook', events: ['session.confirming'], enabled: true },
      });
      expect(patched.status).toBe(200);
      expect(Object.keys(patched.body).sort()).toEqual(SUMMARY_KEYS);
      expect(patched.body).toMatchObject({
        id,
        url: 'https://b.example.com/hook',
        enabled: true,
        events: ['session.confirming'],
      });
      expect(Date.parse(patched.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt));
      expect((await app.request(`${base}/${id}`, { headers })).body.url).toBe('https://b.example.com/hook');
    });

    it('rotates the secret: 200 with a new whsec_ secret that replaces the stored one', async () => {
      const created = await app.request(base, {
        method: 'POST',
        headers,
        json: { url: 'https://rotate.example.com/hook' },
      });
      const rotated = await app.request(`${base}/${created.body.id}/rotate-secret`, {
        method: 'POST',
        headers,
      });
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({
        id: created.body.id,
        secret: expect.stringMatching(/^whsec_/),
        previousSecretExpiresAt: expect.any(String),
      });
      expect(rotated.body.secret).not.toBe(created.body.secret);
      const row = await app.db
        .selectFrom('webhook_endpoints')
        .select('secret_ciphertext')
        .where('id', '=', created.body.id)
        .executeTakeFirstOrThrow();
      expect(secrets.open(row.secret_ciphertext, created.body.id)).toBe(rotated.body.secret);
    });

    it('deletes: 204, then the endpoint is unknown', async () => {
      const created = await app.request(base, {
        method: 'POST',
        headers,
        json: { url: 'https://gone.example.com/hook' },
      });
      expect((await app.request(`${base}/${created.body.id}`, { method: 'DELETE', headers })).status).toBe(
        204,
      );
      expect((await app.request(`${base}/${created.body.id}`, { headers })).status).toBe(404);
      expect((await app.request(`${base}/${created.body.id}`, { method: 'DELETE', headers })).status).toBe(
        404,
      );
    });

    it.each([
      ['a missing url', {}, /url: /],
      ['a relative url', { url: '/hooks' }, /^Validation failed: url: must be an absolute https URL$/],
      [
        'a url of another scheme',
        { url: 'ftp://hooks.example.com/' },
        /^Validation failed: url: must be an absolute https URL$/,
      ],
      [
        'an unknown event type',
        { url: 'https://x.example.com', events: ['session.refunded'] },
        /events\.0: must be one of: session\.confirming, session\.completed, session\.expired, session\.underpaid, session\.failed, session\.overpaid, session\.paid_late, refund\.succeeded, refund\.failed, subscription\.created, subscription\.renewed, subscription\.payment_failed, subscription\.canceled, endpoint\.disabled/,
      ],
      [
        'an empty event list',
        { url: 'https://x.example.com', events: [] },
        /events: must name at least one event type/,
      ],
      [
        'a non-boolean enabled',
        { url: 'https://x.example.com', enabled: 'yes' },
        /enabled: must be a boolean/,
      ],
      ['an unknown field', { url: 'https://x.example.com', secret: 'whsec_mine' }, /Unrecognized key/],
    ])('refuses %s with 400 and writes nothing', async (_case, json, message) => {
      const before = (await app.request(base, { headers })).body.data.length;
      const response = await app.request(base, { method: 'POST', headers, json });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        statusCode: 400,
        message: expect.stringMatching(message),
        error: 'Bad Request',
        errors: expect.arrayContaining([{ field: expect.any(String), message: expect.any(String) }]),
      });
      expect((await app.request(base, { headers })).body.data.length).toBe(before);
    });

    it('refuses an empty or invalid PATCH with 400', async () => {
      const created = await app.request(base, {
        method: 'POST',
        headers,
        json: { url: 'https://patch.example.com' },
      });
      for (const json of [{}, { enabled: 'no' }, { events: ['nope'] }, { url: 'ftp://x.example.com' }]) {
        expect(
          (await app.request(`${base}/${created.body.id}`, { method: 'PATCH', headers, json })).status,
        ).toBe(400);
      }
    });
  });

  it('both route sets manage the same endpoints of the merchant', async () => {
    const merchant = await newMerchant();
    const viaJwt = await app.request('/v1/merchants/me/webhooks', {
      method: 'POST',
      headers: merchant.auth,
      json: { url: 'https://both.example.com' },
    });
    const viaSk = await app.request(`/v1/webhooks/${viaJwt.body.id}`, { headers: merchant.sk });
    expect(viaSk.status).toBe(200);
    expect(viaSk.body.url).toBe('https://both.example.com');
  });

  describe('at most 5 endpoints per merchant', () => {
    it('the 6th creation answers 409', async () => {
      const merchant = await newMerchant();
      for (let index = 0; index < 5; index++) {
        const created = await app.request('/v1/webhooks', {
          method: 'POST',
          headers: merchant.sk,
          json: { url: `https://e${index}.example.com` },
        });
        expect(created.status).toBe(201);
      }
      const sixth = await app.request('/v1/merchants/me/webhooks', {
        method: 'POST',
        headers: merchant.auth,
        json: { url: 'https://e6.example.com' },
      });
      expect(sixth.status).toBe(409);
      expect(sixth.body).toEqual({
        statusCode: 409,
        message: 'Webhook endpoint limit reached: at most 5 endpoints per merchant',
        error: 'Conflict',
      });
    });

    it('10 parallel creations: exactly 5 succeed, the other 5 get 409', async () => {
      const merchant = await newMerchant();
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_unused, index) =>
          app.request(index % 2 ? '/v1/webhooks' : '/v1/merchants/me/webhooks', {
            method: 'POST',
            headers: index % 2 ? merchant.sk : merchant.auth,
            json: { url: `https://race${index}.example.com` },
          }),
        ),
      );
      expect(responses.map((response) => response.status).sort()).toEqual([
        201, 201, 201, 201, 201, 409, 409, 409, 409, 409,
      ]);
      const stored = await app.db
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('merchant_id', '=', merchant.merchantId)
        .execute();
      expect(stored).toHaveLength(5);
    });

    it('deleting one makes room for another', async () => {
      const merchant = await newMerchant();
      const ids: string[] = [];
      for (let index = 0; index < 5; index++) {
        ids.push(
          (
            await app.request('/v1/webhooks', {
              method: 'POST',
              headers: merchant.sk,
              json: { url: `https://room${index}.example.com` },
            })
          ).body.id,
        );
      }
      expect(
        (await app.request(`/v1/webhooks/${ids[0]}`, { method: 'DELETE', headers: merchant.sk })).status,
      ).toBe(204);
      expect(
        (
          await app.request('/v1/webhooks', {
            method: 'POST',
            headers: merchant.sk,
            json: { url: 'https://room5.example.com' },
          })
        ).status,
      ).toBe(201);
    });
  });

  describe('deliveries', () => {
    let merchant: Merchant;
    let endpointId: string;
    let eventIds: string[];

    /** Three deliveries recorded through the repository the workflow uses: failed, succeeded, pending. */
    beforeAll(async () => {
      merchant = await newMerchant();
      endpointId = (
        await app.request('/v1/webhooks', {
          method: 'POST',
          headers: merchant.sk,
          json: { url: 'https://deliveries.example.com' },
        })
      ).body.id;
      eventIds = [];
      for (const outcome of ['http_error', 'succeeded', 'none'] as const) {
        const session = await createConfirmingSession(app.db, merchant.merchantId);
        const event = await insertSessionEventOnce(app.db, {
          id: `evt_${randomUUID()}`,
          type: 'session.confirming',
          merchantId: merchant.merchantId,
          sessionId: session.id,
          payload: '{}',
          createdAt: new Date(),
        });
        eventIds.push(event.id);
        const delivery = await openWebhookDelivery(app.db, {
          merchantId: merchant.merchantId,
          endpointId,
          eventId: event.id,
          workflowId: `webhook-${event.id}-${endpointId}`,
          workflowRunId: randomUUID(),
        });
        if (outcome !== 'none') {
          await recordWebhookAttempt(
            app.db,
            {
              deliveryId: delivery!.id,
              attemptNumber: 1,
              attemptedAt: new Date(),
              outcome,
              statusCode: outcome === 'succeeded' ? 200 : 500,
              latencyMs: 12,
              responseBody: 'ok',
              error: outcome === 'succeeded' ? null : 'HTTP 500',
              nextAttemptAt: null,
            },
            ENDPOINT_DISABLING,
          );
        }
        if (outcome === 'http_error')
          await app.db
            .updateTable('webhook_deliveries')
            .set({ status: 'failed' })
            .where('id', '=', delivery!.id)
            .execute();
      }
    });

    const deliveriesPath = () => `/v1/merchants/me/webhooks/${endpointId}/deliveries`;

    it('lists an endpoint’s deliveries newest first with their attempts, page-based', async () => {
      const page1 = await app.request(`${deliveriesPath()}?limit=2`, { headers: merchant.auth });
      expect(page1.status).toBe(200);
      expect(page1.body).toMatchObject({ page: 1, limit: 2, total: 3 });
      expect(page1.body.data.map((delivery: { eventId: string }) => delivery.eventId)).toEqual([
        eventIds[2],
        eventIds[1],
      ]);
      expect(page1.body.data[1]).toMatchObject({
        status: 'succeeded',
        eventType: 'session.confirming',
        attemptCount: 1,
        attempts: [
          {
            attemptNumber: 1,
            outcome: 'succeeded',
            statusCode: 200,
            latencyMs: 12,
            responseBody: 'ok',
            error: null,
          },
        ],
      });
      const page2 = await app.request(`${deliveriesPath()}?limit=2&page=2`, { headers: merchant.auth });
      expect(page2.body.data.map((delivery: { eventId: string }) => delivery.eventId)).toEqual([eventIds[0]]);
    });

    it('filters by status', async () => {
      for (const [status, expected] of [
        ['failed', [eventIds[0]]],
        ['succeeded', [eventIds[1]]],
        ['pending', [eventIds[2]]],
        ['canceled', []],
      ] as const) {
        const response = await app.request(`${deliveriesPath()}?status=${status}`, {
          headers: merchant.auth,
        });
        expect(response.body.data.map((delivery: { eventId: string }) => delivery.eventId)).toEqual(expected);
        expect(response.body.total).toBe(expected.length);
      }
    });

    it.each(['status=done', 'limit=0', 'limit=101', 'page=0', 'limit=abc'])(
      'refuses ?%s with 400',
      async (query) => {
        expect((await app.request(`${deliveriesPath()}?${query}`, { headers: merchant.auth })).status).toBe(
          400,
        );
      },
    );

    it('deleting the endpoint deletes its delivery history', async () => {
      const other = await newMerchant();
      const id = (
        await app.request('/v1/webhooks', {
          method: 'POST',
          headers: other.sk,
          json: { url: 'https://history.example.com' },
        })
      ).body.id;
      const session = await createConfirmingSession(app.db, other.merchantId);
      const event = await insertSessionEventOnce(app.db, {
        id: `evt_${randomUUID()}`,
        type: 'session.confirming',
        merchantId: other.merchantId,
        sessionId: session.id,
        payload: '{}',
        createdAt: new Date(),
      });
      const delivery = await openWebhookDelivery(app.db, {
        merchantId: other.merchantId,
        endpointId: id,
        eventId: event.id,
        workflowId: `webhook-${event.id}-${id}`,
        workflowRunId: randomUUID(),
      });
      await recordWebhookAttempt(
        app.db,
        {
          deliveryId: delivery!.id,
          attemptNumber: 1,
          attemptedAt: new Date(),
          outcome: 'timeout',
          statusCode: null,
          latencyMs: 10_000,
          responseBody: null,
          error: 'slow',
          nextAttemptAt: new Date(),
        },
        ENDPOINT_DISABLING,
      );
      expect(
        (await app.request(`/v1/merchants/me/webhooks/${id}/deliveries`, { headers: other.auth })).body.total,
      ).toBe(1);

      expect((await app.request(`/v1/webhooks/${id}`, { method: 'DELETE', headers: other.sk })).status).toBe(
        204,
      );
      expect(
        await app.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id).execute(),
      ).toEqual([]);
      expect(
        await app.db
          .selectFrom('webhook_delivery_attempts')
          .select('id')
          .where('delivery_id', '=', delivery!.id)
          .execute(),
      ).toEqual([]);
      expect(
        (await app.request(`/v1/merchants/me/webhooks/${id}/deliveries`, { headers: other.auth })).status,
      ).toBe(404);
    });

    it('another merchant gets 404 for this merchant’s endpoint, its deliveries and every operation on it', async () => {
      const intruder = await newMerchant();
      const checks = [
        app.request(`/v1/merchants/me/webhooks/${endpointId}`, { headers: intruder.auth }),
        app.request(`/v1/webhooks/${endpointId}`, { headers: intruder.sk }),
        app.request(`/v1/webhooks/${endpointId}`, {
          method: 'PATCH',
          headers: intruder.sk,
          json: { enabled: false },
        }),
        app.request(`/v1/merchants/me/webhooks/${endpointId}/rotate-secret`, {
          method: 'POST',
          headers: intruder.auth,
        }),
        app.request(`/v1/webhooks/${endpointId}`, { method: 'DELETE', headers: intruder.sk }),
        app.request(`/v1/merchants/me/webhooks/${endpointId}/deliveries`, { headers: intruder.auth }),
      ];
      for (const response of await Promise.all(checks)) {
        expect(response.status).toBe(404);
        expect(response.body).toEqual({
          statusCode: 404,
          message: 'Webhook endpoint not found',
          error: 'Not Found',
        });
      }
      expect((await app.request('/v1/webhooks', { headers: intruder.sk })).body.data).toEqual([]);
      // Untouched by the attempts above.
      expect((await app.request(`/v1/webhooks/${endpointId}`, { headers: merchant.sk })).body).toMatchObject({
        enabled: true,
      });
    });
  });

  describe('retry-webhook', () => {
    it('answers 404 for an unknown or another merchant’s session, on both routes', async () => {
      const owner = await newMerchant();
      const intruder = await newMerchant();
      const session = await createConfirmingSession(app.db, owner.merchantId);
      for (const id of [randomUUID(), session.id]) {
        expect(
          (await app.request(`/v1/sessions/${id}/retry-webhook`, { method: 'POST', headers: intruder.sk }))
            .status,
        ).toBe(404);
        expect(
          (
            await app.request(`/v1/merchants/me/sessions/${id}/retry-webhook`, {
              method: 'POST',
              headers: intruder.auth,
            })
          ).status,
        ).toBe(404);
      }
    });

    it('answers 409 while the session has no event yet', async () => {
      const owner = await newMerchant();
      const session = await createConfirmingSession(app.db, owner.merchantId);
      const response = await app.request(`/v1/sessions/${session.id}/retry-webhook`, {
        method: 'POST',
        headers: owner.sk,
      });
      expect(response.status).toBe(409);
      expect(response.body.message).toMatch(/no event/);
    });
  });
});

describe('webhook URLs in live configuration (WEBHOOK_ALLOW_PRIVATE_TARGETS=false)', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  beforeAll(async () => {
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    merchant = await signInNewMerchant(app);
  });
  afterAll(() => app.close());

  it.each([
    'https://127.0.0.1/hook',
    'https://10.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/hook',
    'https://192.168.1.10/hook',
    'https://[fe80::1]/hook',
  ])('refuses %s at creation with 400', async (url) => {
    const response = await app.request('/v1/merchants/me/webhooks', {
      method: 'POST',
      headers: merchant.auth,
      json: { url },
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe(
      'Validation failed: url: must not point to a private, loopback or link-local address',
    );
  });

  it('refuses plain http and a PATCH onto a private address', async () => {
    const plain = await app.request('/v1/merchants/me/webhooks', {
      method: 'POST',
      headers: merchant.auth,
      json: { url: 'http://hooks.example.com' },
    });
    expect(plain.status).toBe(400);
    const created = await app.request('/v1/merchants/me/webhooks', {
      method: 'POST',
      headers: merchant.auth,
      json: { url: 'https://hooks.example.com' },
    });
    expect(created.status).toBe(201);
    const patched = await app.request(`/v1/merchants/me/webhooks/${created.body.id}`, {
      method: 'PATCH',
      headers: merchant.auth,
      json: { url: 'https://169.254.169.254/' },
    });
    expect(patched.status).toBe(400);
    expect(
      (await app.request(`/v1/merchants/me/webhooks/${created.body.id}`, { headers: merchant.auth })).body
        .url,
    ).toBe('https://hooks.example.com');
  });

  it('registers a host name that does not resolve yet (its address is checked at delivery)', async () => {
    const response = await app.request('/v1/merchants/me/webhooks', {
      method: 'POST',
      headers: merchant.auth,
      json: { url: 'https://not-yet-live.invalid/hook' },
    });
    expect(response.status).toBe(201);
  });
});
