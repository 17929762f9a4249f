import { sql, type RawBuilder } from 'kysely';
import type { SagaTrx } from '../../db/connect.js';
import { SETTLED_STEP_STATUSES } from '../step-status.js';

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
  return (await markDeliveredUnderLock(trx, [{ runId, stepIdx }])).get(runId) ?? 0;
}

/**
 * The statement of the delivered mark under a lock the caller's transaction already holds (this form, and
 * `markOutcomesDelivered` when its one statement found a run's lock stale), for steps whose runs are locked,
 * issued after the locks were granted (so its snapshot sees every delivery of those runs committed before).
 * Its cursor rule is {@link cursorAfterMarks}, the one `markOutcomesDelivered`'s statement uses too:
 *
 * ```sql
 * WITH marked AS (UPDATE saga_log SET outcome_delivered = true
 *                  WHERE (run_id, step_idx) IN (…) AND status IN (<settled>) AND NOT outcome_delivered
 *                  RETURNING run_id, step_idx)
 * UPDATE runs r SET cursor = <first index from the cursor on with no delivered step, counting `marked`>
 *  WHERE run_id IN (…) RETURNING run_id, cursor;
 * ```
 *
 * The first index at or after the cursor that holds no delivered step is a gap (no row yet) or a step whose
 * outcome is still owed to the caller. The statement cannot see its own CTE's writes, so it counts the steps
 * `marked` returns as delivered itself. Returns each run's cursor afterwards.
 */
export async function markDeliveredUnderLock(
  trx: SagaTrx,
  steps: readonly { readonly runId: string; readonly stepIdx: number }[],
): Promise<ReadonlyMap<string, number>> {
  if (steps.length === 0) return new Map();
  const runIds = [...new Set(steps.map((s) => s.runId))];
  const r = await sql<{ run_id: string; cursor: number }>`
    WITH marked AS (
      UPDATE saga_log s SET outcome_delivered = true
        FROM unnest(${steps.map((s) => s.runId)}::text[], ${steps.map((s) => s.stepIdx)}::int[])
             AS d(run_id, step_idx)
       WHERE s.run_id = d.run_id AND s.step_idx = d.step_idx
         AND s.status = ANY(${[...SETTLED_STEP_STATUSES]}::text[]) AND NOT s.outcome_delivered
      RETURNING s.run_id, s.step_idx
    )
    UPDATE runs r SET cursor = ${cursorAfterMarks()}
     WHERE r.run_id = ANY(${runIds}::text[])
    RETURNING r.run_id, r.cursor`.execute(trx);
  return new Map(r.rows.map((row) => [row.run_id, row.cursor]));
}

/**
 * The cursor rule as SQL, for an `UPDATE runs r` whose statement has a CTE `marked (run_id, step_idx)` of the
 * steps it marks delivered: the first index at or after `r.cursor` that holds no delivered step, counting the
 * steps in `marked` as delivered (the statement cannot see its own CTE's writes). Its snapshot must see every
 * delivery of the run committed before the run's lock was granted (see the callers).
 */
export function cursorAfterMarks(): RawBuilder<number> {
  return sql<number>`(
        SELECT min(g)::int FROM generate_series(r.cursor, r.cursor + (
                 SELECT count(*)::int FROM saga_log s WHERE s.run_id = r.run_id AND s.step_idx >= r.cursor)) g
         WHERE NOT EXISTS (SELECT 1 FROM saga_log s
                            WHERE s.run_id = r.run_id AND s.step_idx = g AND s.outcome_delivered)
           AND NOT EXISTS (SELECT 1 FROM marked m WHERE m.run_id = r.run_id AND m.step_idx = g))`;
}
