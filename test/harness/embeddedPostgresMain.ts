import { startEmbeddedPostgres } from '../../dev/services/postgres';

/** Child process of startPrivatePostgres: starts the server in argv[2], prints its admin URL, stops on SIGTERM. */
async function main(): Promise<void> {
  const server = await startEmbeddedPostgres({ dataDir: process.argv[2]!, persistent: false });
  process.stdout.write(`${server.adminUrl}\n`);
  process.once('SIGTERM', () => {
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `embedded postgres failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
