import { sql, type RawBuilder } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import { STANDARD_EVENT_COLUMNS } from '../steps/standard-events.js';

/**
 * Moves every event of a run's journal back by `by` (an SQL interval), for tests of what happens to old
 * events (retention): the rows of `step_event_rows` and the standard events stored in the run's `saga_log`
 * rows (migration 0022; each event's time is its second column) alike, so the view `step_events` shows every
 * `at` moved.
 */
export async function backdateStepEvents(db: SagaDb, runId: string, by: RawBuilder<unknown>): Promise<void> {
  await sql`UPDATE step_event_rows SET at = at - ${by} WHERE run_id = ${runId}`.execute(db);
  const times = Object.values(STANDARD_EVENT_COLUMNS).map(([, at]) => at);
  await sql`
    UPDATE saga_log SET ${sql.join(times.map((at) => sql`${sql.ref(at)} = ${sql.ref(at)} - ${by}`))}
     WHERE run_id = ${runId}`.execute(db);
}
