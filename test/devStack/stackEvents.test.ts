import { watchStackEvents, type StackEventWatcher } from '../../dev/stackEvents';
import { createDb, type Db } from '../../db/client';
import { startTestApp, type TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';

/** The one line per notable event `npm start` prints after its banner, read from the run's real Postgres. */
describe("the dev stack's event lines", () => {
  let app: TestApp;
  let db: Db;
  let watcher: StackEventWatcher;
  const lines: string[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    db = createDb({ connectionString: testStack().databaseUrl, maxConnections: 2 });
  });
  afterAll(async () => {
    watcher?.stop();
    await db?.destroy();
    await app?.close();
  });

  it('prints a session once when it appears and once per status change, nothing from before the start', async () => {
    const merchant = await signInNewMerchant(app);
    const apiKey = await createApiKey(app, merchant);
    const create = () =>
      app.request('/v1/sessions', {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}` },
        json: { amount: '12.50', sandboxMode: true },
      });
    const before = (await create()).body.id as string;
    await new Promise((resolve) => setTimeout(resolve, 20));

    // Polled by hand here; `npm start` polls every second.
    watcher = watchStackEvents({ db, print: (line) => lines.push(line), intervalMs: 3_600_000 });
    const created = (await create()).body.id as string;
    await watcher.poll();
    const ours = () => lines.filter((line) => line.includes(created) || line.includes(before));
    expect(ours()).toEqual([`session ${created} awaiting_payment (12.5 USD, sandbox)`]);

    await watcher.poll();
    expect(ours()).toHaveLength(1);

    // The session workflow's own write when a deposit is seen (the workflow is not running here).
    await db
      .updateTable('sessions')
      .set({ status: 'confirming', updated_at: new Date() })
      .where('id', '=', created)
      .execute();
    await watcher.poll();
    expect(ours()).toEqual([
      `session ${created} awaiting_payment (12.5 USD, sandbox)`,
      `session ${created} awaiting_payment → confirming`,
    ]);
  });
});
