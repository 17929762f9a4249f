import type { SagaDb, SagaTrx } from '../db/connect.js';
import type { CaseRow, CorrectionRow } from '../db/schema.js';

/**
 * The corrections queued for people on one run, by step. Parameters: `runId`; the caller has already
 * checked that the run belongs to its tenant.
 */
export async function listCorrections(db: SagaDb | SagaTrx, runId: string): Promise<CorrectionRow[]> {
  return db.selectFrom('corrections').selectAll().where('run_id', '=', runId).orderBy('step_idx').execute();
}

/** The manual-intervention cases of one run, oldest first. Parameters: `runId` (tenant already checked). */
export async function listCases(db: SagaDb | SagaTrx, runId: string): Promise<CaseRow[]> {
  return db.selectFrom('cases').selectAll().where('run_id', '=', runId).orderBy('id').execute();
}
