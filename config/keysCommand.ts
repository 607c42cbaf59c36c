import { generateSecretSettings, toDotenv } from './secretSettings';

/**
 * `npm run keys`: prints fresh values for every secret setting in `.env` form
 * (`npm run --silent keys > .env.secrets`). Nothing is stored: run it once per environment, keep the
 * output in your secret store, and never commit it.
 */
generateSecretSettings().then(
  (settings) => process.stdout.write(toDotenv(settings)),
  (error: unknown) => {
    process.stderr.write(`keys: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
