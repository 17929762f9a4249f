import type { SagaDb, SagaTrx } from '../db/connect.js';
import type { StepEventRow } from '../db/schema.js';

/**
 * Every event of one run (transitions, attempts, retries, lookups) in the order they were written.
 * Parameters: `runId`; the caller has already checked that the run belongs to its tenant.
 */
export async function listStepEvents(db: SagaDb | SagaTrx, runId: string): Promise<StepEventRow[]> {
  return db.selectFrom('step_events').selectAll().where('run_id', '=', runId).orderBy('id').execute();
}
