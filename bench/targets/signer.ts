import { createLogger } from '../../logging/logger';
import { loadConfig } from '../../config';
import { startSignerServer } from '../../signer/server';

/**
 * The signing service (signer/) as its own process, as `npm run signer` runs it, on a free port.
 * Its per-request log line is written at the configured level to a sink that drops it, like the api target.
 */
const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' });
const logger = createLogger({ level: config.LOG_LEVEL, name: 'signer' }, { write: () => true } as never);
void startSignerServer({ config, port: 0, host: '127.0.0.1', logger }).then((server) => {
  process.stdout.write(`LISTENING ${new URL(server.url).port} PID ${process.pid}\n`);
  process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)));
});
