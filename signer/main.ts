import { loadConfigOrExit } from '../config';
import { SIGNER_SETTING_CHECKS } from './settingChecks';
import { createLogger } from '../logging/logger';
import { startSignerServer } from './server';

/** The signer process: `npx tsx signer/main.ts` (SIGNER_PRIVATE_KEY, SIGNER_SHARED_SECRET, DEPLOYMENTS_FILE, RPC_URL_<chainId>). */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env, SIGNER_SETTING_CHECKS);
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'signer' });
  const server = await startSignerServer({ config, logger });
  const shutdown = (signal: string): void => {
    logger.info({ signal }, 'signer stopping');
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`signer failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
