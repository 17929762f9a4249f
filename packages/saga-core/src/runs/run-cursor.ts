import { sql, type RawBuilder } from 'kysely';
import type { SagaDb, SagaTrx } from '../db/connect.js';

// The one home of the run cursor's rule. The cursor is where a call without `stepIdx` goes: the first step
// index at or after the run's stored floor (`runs.cursor_floor`) that holds no delivered step, i.e. a gap
// (no row yet) or a step whose settled outcome no response has carried to the caller yet. It never passes an
// outcome the caller has not seen, and a caller that received an answer finds it moved, because the answer
// is sent only after its delivered mark committed (a later request's snapshot sees the mark).
//
// Why computed, not stored (migration 0024): a stored cursor had to move in the same commit as every
// delivered mark, under the run's row lock, which cost each durable call a row lock and an update of the run
// (133 bytes of WAL of some 1,160) and serialised one run's deliveries. The computed cursor only moves
// forward, as the stored one did: `outcome_delivered` is set and never cleared, and a step's row is never
// deleted (retention keeps it, `prune-log.ts`). The floor is a lower bound that only rises
// (`raiseCursorFloor`, by the intakes, once the cursor is {@link CURSOR_FLOOR_LAG} or more past it), so the
// computation reads a bounded stretch of the run: for a run whose caller reads every outcome, the floor and
// a few steps.

/**
 * How far the cursor may run ahead of its stored floor before an intake raises the floor: each raise is an
 * update of the run (a WAL record of some 80 bytes), so at most one per this many steps; the cursor's
 * computation reads at most about this many delivered steps past the floor.
 */
export const CURSOR_FLOOR_LAG = 32;

/**
 * The cursor as SQL, for the run whose id is `runId` and whose floor is `floor` (both expressions the
 * caller's query can evaluate, such as `r.run_id` and `r.cursor_floor` of a `runs r` in scope):
 *
 * ```sql
 * CASE WHEN <no delivered step at the floor> THEN floor
 *      ELSE 1 + <the lowest delivered step at or after the floor whose next step is not delivered> END
 * ```
 *
 * The second branch is right because the floor is delivered there: the delivered steps from the floor on
 * are contiguous up to the first whose successor is not delivered (the `min` reads `saga_log_pkey` in
 * order and stops at it). Snapshot: what the statement's snapshot sees; a mark committed after it may
 * have moved the cursor further (the value is a lower bound of the cursor at any later time).
 */
export function runCursorSql(runId: RawBuilder<string>, floor: RawBuilder<number>): RawBuilder<number> {
  return sql<number>`(CASE
      WHEN NOT EXISTS (SELECT 1 FROM saga_log cur_at
                        WHERE cur_at.run_id = ${runId} AND cur_at.step_idx = ${floor} AND cur_at.outcome_delivered)
      THEN ${floor}
      ELSE (SELECT min(cur_d.step_idx) + 1 FROM saga_log cur_d
             WHERE cur_d.run_id = ${runId} AND cur_d.step_idx >= ${floor} AND cur_d.outcome_delivered
               AND NOT EXISTS (SELECT 1 FROM saga_log cur_n
                                WHERE cur_n.run_id = cur_d.run_id AND cur_n.step_idx = cur_d.step_idx + 1
                                  AND cur_n.outcome_delivered))
    END)::int`;
}

/** The cursor of the run `r` of a query that has `runs r` in scope. */
export const RUN_CURSOR_OF_R: RawBuilder<number> = runCursorSql(sql`r.run_id`, sql`r.cursor_floor`);

/**
 * The cursor of a run as SQL for a statement that has no `runs` row in scope: a scalar subquery, null when
 * there is no such run.
 */
export function runCursorOf(runId: string): RawBuilder<number> {
  return sql<number>`(SELECT ${RUN_CURSOR_OF_R} FROM runs r WHERE r.run_id = ${runId})`;
}

/**
 * Reads a run's cursor (see above). The caller has checked that the run is visible to whoever asks
 * (`getRunFor`); undefined when there is no such run.
 */
export async function readRunCursor(db: SagaDb | SagaTrx, runId: string): Promise<number | undefined> {
  const r = await sql<{ cursor: number | null }>`SELECT ${runCursorOf(runId)} AS cursor`.execute(db);
  return r.rows[0]?.cursor ?? undefined;
}

/**
 * Raises a run's floor to its cursor (never lowers it), computed in the statement: by an intake whose step
 * index is {@link CURSOR_FLOOR_LAG} or more past the floor. Writes nothing when the cursor has not moved
 * past the floor (a step still owed to the caller holds it). Any transaction may: a cursor computed from an
 * older snapshot is still at most the cursor, which never moves back.
 *
 * ```sql
 * UPDATE runs r SET cursor_floor = c.cursor FROM (SELECT <cursor> FROM runs r WHERE run_id = $1) c
 *  WHERE r.run_id = $1 AND c.cursor > r.cursor_floor;
 * ```
 */
export async function raiseCursorFloor(trx: SagaTrx, runId: string): Promise<void> {
  await sql`UPDATE runs r SET cursor_floor = c.cursor
              FROM (SELECT ${runCursorOf(runId)} AS cursor) c
             WHERE r.run_id = ${runId} AND c.cursor > r.cursor_floor`.execute(trx);
}

/**
 * The same raise for the runs of a grouped intake, as a statement's CTE body: `run` is the CTE of the locked
 * runs (with `cursor_floor`) and `i` the items (with `run_id`, `step_idx`).
 */
export const RAISE_FLOORS_OF_GROUP: RawBuilder<unknown> = sql`
      UPDATE runs r SET cursor_floor = ${RUN_CURSOR_OF_R}
        FROM run
       WHERE r.run_id = run.run_id
         AND (SELECT max(i.step_idx) FROM i WHERE i.run_id = run.run_id) >= run.cursor_floor + ${sql.lit(CURSOR_FLOOR_LAG)}
         AND ${RUN_CURSOR_OF_R} > r.cursor_floor`;
