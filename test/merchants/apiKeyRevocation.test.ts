import { sql } from 'kysely';
import { hashApiKey } from '../../api/auth/authenticate';
import type { TestApp } from '../harness/app';
import { createApiKey } from '../harness/merchants';
import { twoApiInstances, waitUntil } from '../harness/twoApiInstances';

/**
 * sk_ keys are looked up through a per-process cache that Postgres LISTEN/NOTIFY invalidates
 * (api/auth/apiKeyCache.ts, the api_keys trigger of migration 610). Two app instances share the database:
 * a key revoked through one stops working on the other within a second, also when the other's listener
 * connection was dropped and the notification was lost.
 */
describe('API-key revocation across api instances', () => {
  const apps = twoApiInstances();

  const skRequest = (app: TestApp, rawKey: string) =>
    app.request('/v1/webhooks', { headers: { authorization: `Bearer ${rawKey}` } });

  /** Uses the key on `app` until it is answered from the cache (the listener connects on first use). */
  async function servedFromCache(app: TestApp, rawKey: string): Promise<void> {
    expect((await skRequest(app, rawKey)).status).toBe(200);
    await waitUntil(() => app.apiKeys!.stats().serving, 'the key cache listener');
    expect((await skRequest(app, rawKey)).status).toBe(200);
    const hits = app.apiKeys!.stats().hits;
    expect((await skRequest(app, rawKey)).status).toBe(200);
    expect(app.apiKeys!.stats().hits).toBe(hits + 1);
  }

  /** Polls until the key answers 401 with the SPEC body; returns how long that took. */
  async function msUntilRejected(app: TestApp, rawKey: string, since: number): Promise<number> {
    for (;;) {
      const response = await skRequest(app, rawKey);
      if (response.status === 401) {
        expect(response.body).toEqual({
          statusCode: 401,
          message: 'Unknown or revoked API key',
          error: 'Unauthorized',
        });
        return Date.now() - since;
      }
      expect(response.status).toBe(200);
      if (Date.now() - since > 5_000) return Date.now() - since;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async function keyId(rawKey: string): Promise<string> {
    const row = await apps.first.db
      .selectFrom('api_keys')
      .select('id')
      .where('key_hash', '=', hashApiKey(rawKey))
      .executeTakeFirstOrThrow();
    return row.id;
  }

  it('a key revoked through one instance answers 401 on another within 1 s', async () => {
    const rawKey = await createApiKey(apps.first, apps.merchant, 'revoked elsewhere');
    await servedFromCache(apps.second, rawKey);

    const revokedAt = Date.now();
    const revoked = await apps.first.request(`/v1/merchants/me/api-keys/${await keyId(rawKey)}`, {
      method: 'DELETE',
      headers: apps.merchant.auth,
    });
    expect(revoked.status).toBe(200);
    expect(await msUntilRejected(apps.second, rawKey, revokedAt)).toBeLessThan(1_000);
    // Revoked for good: nothing puts it back in the cache.
    expect((await skRequest(apps.second, rawKey)).status).toBe(401);
    expect((await skRequest(apps.first, rawKey)).status).toBe(401);
  });

  it('a revocation whose notification the dropped listener missed still takes effect within 1 s', async () => {
    const rawKey = await createApiKey(apps.first, apps.merchant, 'revoked while nobody listened');
    const survivor = await createApiKey(apps.first, apps.merchant, 'still valid');
    await servedFromCache(apps.second, rawKey);
    await servedFromCache(apps.second, survivor);
    const listensBefore = apps.second.apiKeys!.stats().listens;

    // One transaction: every key-cache listener of this database is terminated (and waited for) before
    // the revocation commits, so no listener is there to receive its notification.
    const id = await keyId(rawKey);
    const revokedAt = Date.now();
    await apps.first.db.transaction().execute(async (trx) => {
      const terminated = await sql<{ terminated: boolean }>`
        SELECT pg_terminate_backend(pid, 5000) AS terminated FROM pg_stat_activity
        WHERE application_name = 'stablepay-api-key-cache' AND datname = current_database()`.execute(trx);
      expect(terminated.rows.length).toBeGreaterThanOrEqual(1);
      expect(terminated.rows.every((row) => row.terminated)).toBe(true);
      await trx
        .updateTable('api_keys')
        .set({ revoked_at: sql`now()` })
        .where('id', '=', id)
        .execute();
    });
    expect(await msUntilRejected(apps.second, rawKey, revokedAt)).toBeLessThan(1_000);

    // The listener comes back, with an emptied cache, and serves the valid key from it again.
    await waitUntil(() => apps.second.apiKeys!.stats().listens > listensBefore, 'the listener to reconnect');
    await servedFromCache(apps.second, survivor);
    expect((await skRequest(apps.second, rawKey)).status).toBe(401);
  });
});
