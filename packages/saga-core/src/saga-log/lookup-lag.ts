import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../db/connect.js';

/** Whether a lookup's "not found" may be believed yet, and from when. */
export interface LookupLag {
  /** The step's last attempt was sent more than the tool's `lookupLagMs` ago (by the database's clock). */
  readonly passed: boolean;
  /** When it will have (or had): the earliest moment a "not found" is evidence of absence. */
  readonly believableAt: Date;
}

/**
 * Reads, by the database's clock, whether the step's last attempt was sent more than `lagMs` ago. A step
 * never attempted counts from its last update, which is never earlier than any attempt.
 *
 * Parameters: `runId`, `stepIdx` name the step; `lagMs` is the tool's `lookupLagMs`.
 * Resolves to `passed: false` with `believableAt` in the future when the step does not exist.
 */
export async function lookupLagPassed(
  db: SagaDb | SagaTrx,
  step: { readonly runId: string; readonly stepIdx: number },
  lagMs: number,
): Promise<LookupLag> {
  const r = await sql<{ passed: boolean; believable_at: Date }>`
    SELECT coalesce(last_attempt_at, updated_at) + make_interval(secs => ${lagMs / 1000}) < now() AS passed,
           coalesce(last_attempt_at, updated_at) + make_interval(secs => ${lagMs / 1000}) AS believable_at
      FROM saga_log WHERE run_id = ${step.runId} AND step_idx = ${step.stepIdx}`.execute(db);
  const row = r.rows[0];
  return row
    ? { passed: row.passed, believableAt: row.believable_at }
    : { passed: false, believableAt: new Date(Date.now() + lagMs) };
}
