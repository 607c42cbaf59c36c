import { Migrator, type MigrationResult } from 'kysely';
import type { Db } from './client';
import { migrations } from './migrations';

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** Applies every pending migration in name order; returns what ran. */
export async function migrateToLatest(db: Db): Promise<MigrationResult[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((result) => result.status === 'Error');
    throw new MigrationError(
      `migration ${failed?.migrationName ?? '(unknown)'} failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return results;
}
