import { sql } from 'kysely';
import type { TestApp } from '../harness/app';
import { twoApiInstances, waitUntil } from '../harness/twoApiInstances';
import { createPaymasterClient, paymasterRpc } from './paymasterApi';

/**
 * Paymaster clients are looked up through a per-process cache that Postgres LISTEN/NOTIFY invalidates
 * (api/auth/listenedCache.ts, the paymaster_clients trigger of migration 990): one Postgres round trip
 * fewer per RPC request. Two app instances share the database: a client revoked or changed through one
 * stops working, or works under its new rules, on the other within a second, also when the other's
 * listener was dropped and the notification lost; on the instance that made the change, at once.
 */

// Any JSON-RPC request shows whether the client authenticated: 200 (with a JSON-RPC answer) or 401/403.
const RPC = { jsonrpc: '2.0', id: 1, method: 'pm_supportedEntryPoints', params: [] };
const UNAUTHORIZED = {
  statusCode: 401,
  message: expect.stringMatching(/^paymaster_unauthorized/),
  error: 'Unauthorized',
};

describe('paymaster client cache across api instances', () => {
  const apps = twoApiInstances();

  /** Calls the RPC with the client on `app` until it is answered from the cache (the listener connects on first use). */
  async function servedFromCache(app: TestApp, clientId: string, headers: Record<string, string> = {}) {
    expect((await paymasterRpc(app, clientId, RPC, headers)).status).toBe(200);
    await waitUntil(() => app.paymasterClients!.stats().serving, 'the client cache listener');
    expect((await paymasterRpc(app, clientId, RPC, headers)).status).toBe(200);
    const hits = app.paymasterClients!.stats().hits;
    expect((await paymasterRpc(app, clientId, RPC, headers)).status).toBe(200);
    expect(app.paymasterClients!.stats().hits).toBe(hits + 1);
  }

  /** Polls until the client's request answers `status`; returns how long that took. */
  async function msUntil(
    app: TestApp,
    clientId: string,
    status: number,
    since: number,
    headers: Record<string, string> = {},
  ): Promise<number> {
    for (;;) {
      const response = await paymasterRpc(app, clientId, RPC, headers);
      if (response.status === status) return Date.now() - since;
      expect(response.status).toBe(200);
      if (Date.now() - since > 5_000) return Date.now() - since;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('a client revoked through one instance answers 401 there at once and on the other within 1 s', async () => {
    const client = await createPaymasterClient(apps.first, apps.merchant);
    await servedFromCache(apps.first, client.clientId);
    await servedFromCache(apps.second, client.clientId);

    const revokedAt = Date.now();
    const revoked = await apps.first.request(`/v1/paymaster/clients/${client.id}`, {
      method: 'DELETE',
      headers: apps.merchant.auth,
    });
    expect(revoked.status).toBe(200);
    const onFirst = await paymasterRpc(apps.first, client.clientId, RPC);
    expect(onFirst.status).toBe(401);
    expect(onFirst.body).toEqual(UNAUTHORIZED);
    expect(await msUntil(apps.second, client.clientId, 401, revokedAt)).toBeLessThan(1_000);
    // Revoked for good: nothing puts it back in the cache.
    expect((await paymasterRpc(apps.second, client.clientId, RPC)).body).toEqual(UNAUTHORIZED);
  });

  it('allowed origins changed through one instance apply there at once and on the other within 1 s', async () => {
    const client = await createPaymasterClient(apps.first, apps.merchant);
    const origin = { origin: 'https://wallet.example' };
    await servedFromCache(apps.first, client.clientId, origin);
    await servedFromCache(apps.second, client.clientId, origin);

    const changedAt = Date.now();
    const changed = await apps.first.request(`/v1/paymaster/clients/${client.id}`, {
      method: 'PATCH',
      headers: apps.merchant.auth,
      json: { allowedOrigins: ['https://other.example'] },
    });
    expect(changed.status).toBe(200);
    expect((await paymasterRpc(apps.first, client.clientId, RPC, origin)).status).toBe(403);
    expect(await msUntil(apps.second, client.clientId, 403, changedAt, origin)).toBeLessThan(1_000);
    expect(
      (await paymasterRpc(apps.second, client.clientId, RPC, { origin: 'https://other.example' })).status,
    ).toBe(200);
  });

  it('a revocation whose notification the dropped listener missed still takes effect within 1 s', async () => {
    const client = await createPaymasterClient(apps.first, apps.merchant);
    const survivor = await createPaymasterClient(apps.first, apps.merchant);
    await servedFromCache(apps.second, client.clientId);
    await servedFromCache(apps.second, survivor.clientId);
    const listensBefore = apps.second.paymasterClients!.stats().listens;

    // One transaction: every client-cache listener of this database is terminated (and waited for) before
    // the revocation commits, so no listener is there to receive its notification.
    const revokedAt = Date.now();
    await apps.first.db.transaction().execute(async (trx) => {
      const terminated = await sql<{ terminated: boolean }>`
        SELECT pg_terminate_backend(pid, 5000) AS terminated FROM pg_stat_activity
        WHERE application_name = 'stablepay-paymaster-client-cache' AND datname = current_database()`.execute(
        trx,
      );
      expect(terminated.rows.length).toBeGreaterThanOrEqual(1);
      expect(terminated.rows.every((row) => row.terminated)).toBe(true);
      await trx
        .updateTable('paymaster_clients')
        .set({ revoked_at: sql`now()` })
        .where('id', '=', client.id)
        .execute();
    });
    expect(await msUntil(apps.second, client.clientId, 401, revokedAt)).toBeLessThan(1_000);

    // The listener comes back, with an emptied cache, and serves the valid client from it again.
    await waitUntil(
      () => apps.second.paymasterClients!.stats().listens > listensBefore,
      'the listener to reconnect',
    );
    await servedFromCache(apps.second, survivor.clientId);
    expect((await paymasterRpc(apps.second, client.clientId, RPC)).status).toBe(401);
  });
});
