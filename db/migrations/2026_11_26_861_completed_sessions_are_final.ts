import { sql, type Kysely } from 'kysely';

/**
 * A completed session is final (SPEC: terminal states), whatever path writes it: an UPDATE that moves a
 * `completed` session to any other status is refused. Funds that reach it late are swept to the payout
 * address without a status change, so it never sends a second `session.confirming` (events already hold
 * one event of each type per session: `events_session_type_key`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION refuse_reopening_completed_session() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'session % is completed, which is final (attempted %)', OLD.id, NEW.status
        USING ERRCODE = 'check_violation';
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER sessions_completed_is_final
    BEFORE UPDATE OF status ON sessions
    FOR EACH ROW WHEN (OLD.status = 'completed' AND NEW.status IS DISTINCT FROM 'completed')
    EXECUTE FUNCTION refuse_reopening_completed_session()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER sessions_completed_is_final ON sessions`.execute(db);
  await sql`DROP FUNCTION refuse_reopening_completed_session()`.execute(db);
}
