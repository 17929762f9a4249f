import { sql, type RawBuilder } from 'kysely';
import type { SagaDb } from '../db/connect.js';

/**
 * Moves every event of a run's journal back by `by` (an SQL interval), for tests of what happens to old
 * events (retention): the rows of `step_event_rows` and the standard events stored in the run's `saga_log`
 * rows (migration 0022) alike, so the view `step_events` shows every `at` moved.
 */
export async function backdateStepEvents(db: SagaDb, runId: string, by: RawBuilder<unknown>): Promise<void> {
  await sql`UPDATE step_event_rows SET at = at - ${by} WHERE run_id = ${runId}`.execute(db);
  const moved = (column: string) =>
    sql`CASE WHEN ${sql.ref(column)} IS NULL THEN NULL
             ELSE jsonb_set(${sql.ref(column)}, '{at}', to_jsonb((${sql.ref(column)}->>'at')::timestamptz - ${by})) END`;
  await sql`
    UPDATE saga_log SET intake_event = ${moved('intake_event')}, attempt_event = ${moved('attempt_event')},
                        outcome_event = ${moved('outcome_event')}
     WHERE run_id = ${runId}`.execute(db);
}
