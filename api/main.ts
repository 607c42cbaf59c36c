import { ConfigError, exitWithConfigError, loadConfigOrExit, requireSetting } from '../config';
import { API_SETTING_CHECKS } from './settingChecks';
import { boundedWaitsFrom, createDb } from '../db/client';
import { createApp } from './app';
import { createLogger } from '../logging/logger';

/** The api process: HTTP server until SIGINT/SIGTERM, then a graceful close. */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env, API_SETTING_CHECKS);
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'api' });
  const db = createDb({
    connectionString: requireSetting(config, 'DATABASE_URL'),
    ...boundedWaitsFrom(config),
    onIdleError: (error) =>
      logger.warn({ errorName: error.name, message: error.message }, 'idle database connection lost'),
  });
  // Loaded only when configured: with tracing off, no OpenTelemetry module is even imported.
  const tracing = config.OTEL_EXPORTER_OTLP_ENDPOINT
    ? (await import('../tracing/tracing')).startTracing({
        endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
        serviceName: 'stablepay-api',
      })
    : undefined;
  const { koa, close } = await createApp({ config, db, logger, tracing });
  const server = koa.listen(config.PORT, () => logger.info({ port: config.PORT }, 'api listening'));

  const shutdown = () => {
    logger.info('api shutting down');
    server.close(
      () => void Promise.all([close(), db.destroy(), tracing?.shutdown()]).then(() => process.exit(0)),
    );
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

void main().catch((error) => {
  if (error instanceof ConfigError) exitWithConfigError(error);
  process.stderr.write(`api failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
