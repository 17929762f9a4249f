import { sql, type Kysely } from 'kysely';

/**
 * The run's cursor becomes a floor (issue 10): `runs.cursor` is renamed `cursor_floor`.
 *
 * Until now every delivered mark locked the run's row and moved the cursor in the same commit, so each
 * durable call wrote the run twice (a row lock, 54 bytes of WAL, and the cursor's HOT update, 79 bytes) and
 * serialised the deliveries of one run on that lock. The cursor is now computed where it is read (core's
 * `runs/run-cursor.ts`): the first step index at or after the floor that holds no delivered step. A step's
 * `outcome_delivered` is only ever set, never cleared, and a step's row is never deleted, so that index
 * only moves forward, as the stored cursor did. The floor is raised by the intakes when the cursor has gone
 * far past it, which bounds what the computation reads.
 *
 * Renamed rather than kept: a reader of the old column would read a floor as if it were the cursor. The
 * floor starts as the stored cursor, which was exact.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runs RENAME COLUMN cursor TO cursor_floor`.execute(db);
  await sql`ALTER TABLE runs RENAME CONSTRAINT runs_cursor_check TO runs_cursor_floor_check`.execute(db);
}

/** The floor becomes the cursor again, raised to the computed cursor first (the rule of migration 0024's code). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    UPDATE runs r SET cursor_floor = (
      SELECT min(g)::int FROM generate_series(r.cursor_floor, r.cursor_floor + (
               SELECT count(*)::int FROM saga_log s WHERE s.run_id = r.run_id AND s.step_idx >= r.cursor_floor)) g
       WHERE NOT EXISTS (SELECT 1 FROM saga_log s
                          WHERE s.run_id = r.run_id AND s.step_idx = g AND s.outcome_delivered))`.execute(db);
  await sql`ALTER TABLE runs RENAME CONSTRAINT runs_cursor_floor_check TO runs_cursor_check`.execute(db);
  await sql`ALTER TABLE runs RENAME COLUMN cursor_floor TO cursor`.execute(db);
}
