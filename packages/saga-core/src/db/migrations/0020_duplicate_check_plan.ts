import { sql, type Kysely } from 'kysely';

/**
 * `saga_earlier_operation` (migration 0016) plans its query once per session, not once per call.
 *
 * The function runs once per item of every grouped intake statement (`recordNewIntents`). Connections run
 * with `plan_cache_mode=force_custom_plan` (db/connect.ts), and a function's queries inherit it, so its
 * one query was planned anew on every call: in a profile of the bench's sustained phase, the function was
 * a fifth of Postgres's CPU, most of it the planner. Its own settings now ask for the cached generic plan,
 * and rule out a sequential scan: the query reads one run's rows (`run_id = $1`, lowest index first), and
 * the generic plan of that on an empty or a large `saga_log` alike is the primary key's index scan in
 * order, which `enable_seqscan = off` keeps so whatever the statistics say when the plan is made (a
 * fresh table has none). What the function decides is unchanged; `find-duplicate-operation.test.ts`
 * still checks it against the live rule.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER FUNCTION saga_earlier_operation(text, text, jsonb, jsonb)
      SET plan_cache_mode = force_generic_plan`.execute(db);
  await sql`
    ALTER FUNCTION saga_earlier_operation(text, text, jsonb, jsonb)
      SET enable_seqscan = off`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER FUNCTION saga_earlier_operation(text, text, jsonb, jsonb) RESET plan_cache_mode`.execute(
    db,
  );
  await sql`ALTER FUNCTION saga_earlier_operation(text, text, jsonb, jsonb) RESET enable_seqscan`.execute(db);
}
