import { loadConfig } from '../../config';
import { createApp, type AppDependencies } from '../../api/app';
import { createDb } from '../../db/client';
import { createLogger } from '../../logging/logger';

/**
 * Serves the full Koa app as the api process builds it (middleware, logging, metrics) on a free port,
 * announcing it with `LISTENING <port>` for bench/lib/target.ts. `overrides` replace one dependency
 * (a bench baseline without auth or without limits); everything else is the production wiring.
 */
export function serveApp(
  overrides: Pick<AppDependencies, 'authenticators' | 'sponsorshipLimits'> = {},
): void {
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' });
  const db = createDb({ connectionString: config.DATABASE_URL ?? 'postgres://unused@127.0.0.1:1/unused' });
  // Access logs are produced at the configured level, as in production, and written nowhere.
  const logger = createLogger({ level: config.LOG_LEVEL }, { write: () => true } as never);
  void createApp({ config, db, logger, ...overrides }).then(({ koa }) => {
    const server = koa.listen(0, '127.0.0.1', () => {
      const address = server.address();
      process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
    });
    process.once('SIGTERM', () => server.close(() => void db.destroy().then(() => process.exit(0))));
  });
}
