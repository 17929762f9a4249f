import { sql } from 'kysely';
import type { SagaDb } from '../../db/connect.js';
import type { CallDecision } from './record-intent.js';

/**
 * The latest model decision behind each step of a run (`detail.decision` of its intake event or of a
 * retry's RETRY_CALL event), by step index; steps whose calls carried none are absent. Reads the run's
 * events through `step_events_run (run_id, id)`, newest first per step:
 *
 * ```sql
 * SELECT DISTINCT ON (step_idx) step_idx, detail->'decision' FROM step_events
 *  WHERE run_id = $run AND step_idx IS NOT NULL AND detail ? 'decision' ORDER BY step_idx, id DESC;
 * ```
 */
export async function readStepDecisions(
  db: SagaDb,
  runId: string,
  /** Only this step's (a read of one step); absent: every step's. */
  stepIdx?: number,
): Promise<ReadonlyMap<number, CallDecision>> {
  const oneStep = stepIdx === undefined ? sql`` : sql`AND step_idx = ${stepIdx}`;
  const r = await sql<{ step_idx: number; decision: CallDecision }>`
    SELECT DISTINCT ON (step_idx) step_idx, detail->'decision' AS decision
      FROM step_events
     WHERE run_id = ${runId} AND step_idx IS NOT NULL AND detail ? 'decision' ${oneStep}
     ORDER BY step_idx, id DESC`.execute(db);
  return new Map(r.rows.map((row) => [row.step_idx, row.decision]));
}
