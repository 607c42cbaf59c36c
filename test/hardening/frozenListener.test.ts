import { chmod, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Client } from 'pg';
import { NotificationListener } from '../../api/auth/notificationListener';
import { createLogger } from '../../logging/logger';
import { startPrivatePostgres, type PrivatePostgres } from '../harness/embeddedPostgresProcess';

/**
 * The LISTEN connection behind the API-key cache and the session revocation list (api/auth/notificationListener.ts)
 * while its Postgres is frozen with SIGSTOP: it keeps one heartbeat in flight, not one more per tick (pg deprecates
 * a query sent while another runs, and the queue would grow for as long as the freeze lasts), stops being
 * trusted, and is trusted again once the server answers. A private Postgres, as freezing the run's shared one
 * would stall every other test.
 */
const HEARTBEAT_MS = 50;
const STALE_AFTER_MS = 200;
const FROZEN_MS = 1_500;

describe('a notification listener on a frozen Postgres', () => {
  let postgres: PrivatePostgres;
  let listener: NotificationListener | undefined;

  beforeAll(async () => {
    const workDir = await mkdtemp(join(tmpdir(), 'stablepay-listener-'));
    // initdb runs as another user when the tests run as root: it must reach the folder.
    await chmod(workDir, 0o755);
    postgres = await startPrivatePostgres(join(workDir, 'postgres'));
  }, 120_000);
  afterAll(async () => {
    postgres?.thaw();
    await listener?.close();
    await postgres?.stop();
  });

  /** Waits until `check` holds, failing with `what` after `timeoutMs`. */
  async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('keeps one heartbeat in flight while the server is frozen, is not trusted meanwhile, and is trusted again after', async () => {
    // Every heartbeat the listener's connection sends, as it is sent and until its reply (the real query runs).
    const query = Client.prototype.query as (this: Client, ...args: unknown[]) => unknown;
    let inFlight = 0;
    let mostInFlight = 0;
    let sent = 0;
    const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (
      this: Client,
      ...args: unknown[]
    ) {
      const result = query.apply(this, args);
      if (args[0] === 'SELECT 1' && result instanceof Promise) {
        sent += 1;
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        void result.then(
          () => (inFlight -= 1),
          () => (inFlight -= 1),
        );
      }
      return result;
    } as never);
    try {
      let beats = 0;
      listener = new NotificationListener({
        connectionString: postgres.adminUrl,
        channel: 'frozen_listener_test',
        applicationName: 'frozen-listener-test',
        logger: createLogger({ level: 'silent' }, new Writable({ write: (_c, _e, done) => done() })),
        lostMessage: 'listener lost',
        prepare: async () => () => undefined,
        onNotification: () => undefined,
        onDown: () => undefined,
        onBeat: () => (beats += 1),
        heartbeatMs: HEARTBEAT_MS,
        staleAfterMs: STALE_AFTER_MS,
      });
      listener.start();
      await until(() => listener!.alive() && beats >= 3, 'the listener to beat');
      expect(mostInFlight).toBe(1);

      postgres.freeze();
      const sentAtFreeze = sent;
      try {
        await until(() => !listener!.alive(), 'the listener to stop being trusted', STALE_AFTER_MS * 5);
        await new Promise((resolve) => setTimeout(resolve, FROZEN_MS));
        // Some 30 ticks went by: at most the one beat that was under way when the server stopped, or one sent after.
        expect(sent - sentAtFreeze).toBeLessThanOrEqual(1);
        expect(listener.alive()).toBe(false);
      } finally {
        postgres.thaw();
      }

      const beatsAtThaw = beats;
      await until(() => listener!.alive() && beats >= beatsAtThaw + 2, 'the listener to be trusted again');
      expect(mostInFlight).toBe(1);
    } finally {
      spy.mockRestore();
    }
  }, 60_000);
});
