import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../../db/connect.js';
import { SETTLED_STEP_STATUSES } from '../step-status.js';

/**
 * Records that a response carried the settled outcome (CONFIRMED or FAILED) of one step to the caller:
 * `outcome_delivered`, which moves the run's cursor past the step once every step before it was delivered
 * too (the cursor is computed from these marks, `runs/run-cursor.ts`; nothing of the run is written or
 * locked). The mark is only ever set, so the cursor only moves forward. An unsettled step, or one already
 * delivered, is left as it is.
 *
 * ```sql
 * UPDATE saga_log SET outcome_delivered = true
 *  WHERE run_id = $1 AND step_idx = $2 AND status IN (<settled>) AND NOT outcome_delivered;
 * ```
 *
 * The caller sends the response only after this commits, so a caller that got the answer finds the cursor
 * moved. The batch form is `markOutcomesDelivered` (README.md here).
 */
export async function markOutcomeDelivered(
  db: SagaDb | SagaTrx,
  runId: string,
  stepIdx: number,
): Promise<void> {
  await sql`
    UPDATE saga_log SET outcome_delivered = true
     WHERE run_id = ${runId} AND step_idx = ${stepIdx}
       AND status = ANY(${[...SETTLED_STEP_STATUSES]}::text[]) AND NOT outcome_delivered`.execute(db);
}
