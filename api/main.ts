import { ConfigError, exitWithConfigError, loadConfigOrExit, requireSetting } from '../config';
import { API_SETTING_CHECKS } from './settingChecks';
import { boundedWaitsFrom, createDb } from '../db/client';
import { createApp } from './app';
import { createApiServer, stopGracefully } from './httpServer';
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
  const { koa, close, markNotReady } = await createApp({ config, db, logger, tracing });
  const api = createApiServer(koa.callback());
  api.server.listen(config.PORT, () => logger.info({ port: config.PORT }, 'api listening'));

  // Graceful stop (docs/operations.md#rolling-restart): not ready at once, serve through the drain
  // period, finish what is in flight, exit; never outlive the signal by more than the deadline.
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      logger.warn({ deadlineMs: config.API_STOP_DEADLINE_MS }, 'api stop deadline passed: exiting');
      process.exit(1);
    }, config.API_STOP_DEADLINE_MS).unref();
    void stopGracefully(api, {
      markNotReady,
      drainMs: config.API_DRAIN_MS,
      // A second of the deadline is left for closing the connections to Temporal and Postgres.
      deadlineMs: Math.max(0, config.API_STOP_DEADLINE_MS - 1000),
      log: (message, details) => logger.info(details ?? {}, message),
    })
      .then(async ({ cutConnections }) => {
        if (cutConnections) logger.warn({ cutConnections }, 'api stop deadline: connections cut');
        await Promise.all([close(), db.destroy(), tracing?.shutdown()]);
        logger.info('api stopped');
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ message: (error as Error).message }, 'api stop failed');
        process.exit(1);
      });
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

void main().catch((error) => {
  if (error instanceof ConfigError) exitWithConfigError(error);
  process.stderr.write(`api failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
