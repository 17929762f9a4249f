import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import { SETTLED_STEP_STATUSES } from '../statuses.js';

/**
 * Records that a response carried the settled outcome (CONFIRMED or FAILED) of one step to the caller, and
 * moves the run's cursor past every step, from the cursor on, whose outcome has been delivered. The cursor
 * is where a call without `stepIdx` goes; it never passes a step whose outcome the caller has not seen.
 *
 * Parameters: `runId`, `stepIdx`. Must run in a transaction that holds the run's lock (`lockRun`), so
 * concurrent deliveries of neighbouring steps see each other and the cursor only moves forward.
 * Returns the run's cursor afterwards. An unsettled step is left as it is (nothing to deliver).
 */
export async function markOutcomeDelivered(trx: SagaTrx, runId: string, stepIdx: number): Promise<number> {
  await trx
    .updateTable('saga_log')
    .set({ outcome_delivered: true })
    .where('run_id', '=', runId)
    .where('step_idx', '=', stepIdx)
    .where('status', 'in', [...SETTLED_STEP_STATUSES])
    .where('outcome_delivered', '=', false)
    .execute();
  // The first index at or after the cursor that holds no delivered step: a gap (no row yet) or a step
  // whose outcome is still owed to the caller.
  const r = await sql<{ cursor: number }>`
    UPDATE runs r SET cursor = (
        SELECT min(g)::int FROM generate_series(r.cursor, r.cursor + (
                 SELECT count(*)::int FROM saga_log s WHERE s.run_id = r.run_id AND s.step_idx >= r.cursor)) g
         WHERE NOT EXISTS (SELECT 1 FROM saga_log s
                            WHERE s.run_id = r.run_id AND s.step_idx = g AND s.outcome_delivered))
     WHERE r.run_id = ${runId}
    RETURNING r.cursor`.execute(trx);
  return r.rows[0]?.cursor ?? 0;
}
