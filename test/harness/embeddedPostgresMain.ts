import { startEmbeddedPostgres } from '../../dev/services/postgres';

/**
 * Child process of startPrivatePostgres: starts the server in argv[2] (on port argv[3] when given, keeping
 * its data at stop when argv[4] is `persistent`), prints its admin URL, stops on SIGTERM.
 */
async function main(): Promise<void> {
  const [dataDir, port, keep] = process.argv.slice(2);
  const server = await startEmbeddedPostgres({
    dataDir: dataDir!,
    port: port ? Number(port) : undefined,
    persistent: keep === 'persistent',
  });
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
