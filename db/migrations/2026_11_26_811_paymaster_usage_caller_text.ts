import { sql, type Kysely } from 'kysely';

/**
 * Usage rows written before security review II (finding 4) could hold a caller's free text as the
 * method (its first 64 characters) or, through the bundler proxy, as the sender or entry point. The
 * merchant's AI agent reads these rows: such values become `unknown_method` and null, as new rows store them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`UPDATE paymaster_usage SET method = 'unknown_method'
    WHERE method IS NOT NULL AND method NOT IN (
      'pm_getPaymasterStubData', 'pm_getPaymasterData', 'pm_sponsorUserOperation',
      'eth_sendUserOperation', 'eth_estimateUserOperationGas')`.execute(db);
  await sql`UPDATE paymaster_usage SET sender = NULL WHERE sender !~* '^0x[0-9a-f]{40}$'`.execute(db);
  await sql`UPDATE paymaster_usage SET entry_point = NULL WHERE entry_point !~* '^0x[0-9a-f]{40}$'`.execute(
    db,
  );
}

export async function down(): Promise<void> {
  // The caller's text is gone on purpose.
}
