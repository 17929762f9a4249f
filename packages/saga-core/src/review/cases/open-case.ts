import { sql } from 'kysely';
import type { SagaTrx } from '../../db/connect.js';
import { ReviewStatus } from './case-status.js';

export interface NewCase {
  readonly runId: string;
  /** The step a person must settle, or null for the whole run. */
  readonly stepIdx: number | null;
  readonly tenantId: string;
  /** One line a person reads first: what needs them and why. */
  readonly reason: string;
  /** Everything the harness saw: lookups, attempts, errors, with their times. */
  readonly evidence: Record<string, unknown>;
}

/**
 * Opens a manual-intervention case, in the caller's transaction. At most one case per step (or per run) is
 * open at a time (`cases_one_open_per_step`): opening it again while it is open does nothing, so a sweep
 * or a resumed process that reaches the same conclusion twice queues one item, not two.
 */
export async function openCase(trx: SagaTrx, c: NewCase): Promise<void> {
  await sql`
    INSERT INTO cases (run_id, step_idx, tenant_id, reason, evidence, status)
    VALUES (${c.runId}, ${c.stepIdx}, ${c.tenantId}, ${c.reason}, ${JSON.stringify(c.evidence)}, ${ReviewStatus.OPEN})
    ON CONFLICT (run_id, coalesce(step_idx, -1)) WHERE status = ${sql.lit(ReviewStatus.OPEN)} DO NOTHING`.execute(
    trx,
  );
}
