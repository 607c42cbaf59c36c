import { loadConfig } from '../../config';
import { createApp } from '../../api/app';
import { createDb } from '../../db/client';
import { createLogger } from '../../api/logger';

/** The full Koa stack (middleware, logging, metrics) as the api process builds it, on a free port. */
const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' });
const db = createDb({ connectionString: config.DATABASE_URL ?? 'postgres://unused@127.0.0.1:1/unused' });
// Access logs go to /dev/null-equivalent pino destination at the configured level, as in production.
const logger = createLogger({ level: config.LOG_LEVEL }, { write: () => true } as never);
void createApp({ config, db, logger }).then(({ koa }) => {
  const server = koa.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.once('SIGTERM', () => server.close(() => void db.destroy().then(() => process.exit(0))));
});
