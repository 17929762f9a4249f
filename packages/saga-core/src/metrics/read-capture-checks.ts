import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import { StepStatus } from '../statuses.js';

/**
 * A business invariant between two tools: a CONFIRMED `capture` step must sit in a run that also holds a
 * CONFIRMED `reservation` step (money is taken only against an authorisation the run itself made).
 */
export interface CaptureCheck {
  readonly capture: string;
  readonly reservation: string;
}

/** The connectors' payment pair: `capture_payment` needs a confirmed `authorize_payment` in its run. */
export const DEFAULT_CAPTURE_CHECKS: readonly CaptureCheck[] = [
  { capture: 'capture_payment', reservation: 'authorize_payment' },
];

/**
 * For each check, the CONFIRMED capture steps whose run has no CONFIRMED reservation step. Any non-zero
 * value is an incident (a capture against a hold the run never confirmed: someone else's, an expired one,
 * or none). No index serves `tool`: the outer read scans the log's steps (the anti-join then uses the
 * primary key `(run_id, step_idx)`), which is why this group is one the collector runs for one role only.
 */
export async function readCapturesWithoutReservation(
  db: SagaDb,
  checks: readonly CaptureCheck[],
): Promise<ReadonlyMap<string, number>> {
  const found = new Map<string, number>();
  for (const c of checks) {
    const r = await sql<{ n: number }>`
      SELECT count(*)::float8 AS n
        FROM saga_log cap
       WHERE cap.tool = ${c.capture}
         AND cap.status = ${StepStatus.CONFIRMED}
         AND NOT EXISTS (
               SELECT 1 FROM saga_log res
                WHERE res.run_id = cap.run_id
                  AND res.tool = ${c.reservation}
                  AND res.status = ${StepStatus.CONFIRMED})`.execute(db);
    found.set(c.capture, (found.get(c.capture) ?? 0) + (r.rows[0]?.n ?? 0));
  }
  return found;
}
