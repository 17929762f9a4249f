import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';

/**
 * For each capture check of the schema (`capture_checks`, migration 0008: a CONFIRMED `capture_payment`
 * step needs a CONFIRMED `authorize_payment` step in its run), the CONFIRMED capture steps whose run has no
 * CONFIRMED reservation step, by capture tool; every check is present (0 when none). Any non-zero value is
 * an incident (a capture against a hold the run never confirmed: someone else's, an expired one, or none).
 *
 * The checks are evaluated as steps are written: triggers on `saga_log`, limited to the checked tools, keep
 * per run how many steps of each tool are CONFIRMED (`capture_check_runs`). A reservation confirmed after
 * its capture clears the violation, as a read of the log at that moment would. This read sums the rows
 * with captures and no reservation through the partial index `capture_check_runs_violating` (the predicate
 * is spelled as constants in the query so the planner can prove it): it costs the open violations, not the
 * number of steps or payments in the log.
 */
export async function readCapturesWithoutReservation(db: SagaDb): Promise<ReadonlyMap<string, number>> {
  const r = await sql<{ tool: string; n: number }>`
    SELECT k.capture_tool AS tool, coalesce(sum(v.captures_confirmed), 0)::float8 AS n
      FROM capture_checks k
      LEFT JOIN capture_check_runs v
             ON v.capture_tool = k.capture_tool
            AND v.captures_confirmed > 0 AND v.reservations_confirmed = 0
     GROUP BY k.capture_tool`.execute(db);
  return new Map(r.rows.map((row) => [row.tool, row.n]));
}
