import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import type { CheckedDefinition } from './check-run-invariant.js';
import type { InvariantEnding } from './saga-invariant.js';

/** A failed invariant, as the ending transaction records it. */
export interface InvariantViolation {
  readonly runId: string;
  readonly tenantId: string;
  readonly definition: CheckedDefinition;
  readonly ending: InvariantEnding;
  readonly clause: string;
}

/**
 * Records a failed invariant (`invariant_violations`, migration 0015) and counts it for
 * `saga_invariant_violations_total{definition}` (`invariant_violation_counts`), in the transaction that
 * ends the run otherwise, so the record and the run's status commit together.
 *
 * ```sql
 * INSERT INTO invariant_violations (run_id, tenant_id, definition_name, definition_version, ending, clause)
 * VALUES ($run, $tenant, $name, $version, $ending, $clause);
 * INSERT INTO invariant_violation_counts … ON CONFLICT (definition) DO UPDATE SET violations = violations + 1;
 * ```
 */
export async function recordInvariantViolation(trx: SagaTrx, v: InvariantViolation): Promise<void> {
  await sql`
    INSERT INTO invariant_violations (run_id, tenant_id, definition_name, definition_version, ending, clause)
    VALUES (${v.runId}, ${v.tenantId}, ${v.definition.name}, ${v.definition.version}, ${v.ending}, ${v.clause})`.execute(
    trx,
  );
  await sql`
    INSERT INTO invariant_violation_counts AS c (definition, violations, restored, restore_seconds)
    VALUES (${v.definition.name}, 1, 0, 0)
    ON CONFLICT (definition) DO UPDATE SET violations = c.violations + 1`.execute(trx);
}

/**
 * A check of a run found its invariant holding: every open violation of the run is restored now, and the
 * time from each one's detection to now (the database's clock) is added to
 * `saga_invariant_restore_seconds_sum{definition}`. Nothing happens for a run with none open (the usual
 * case: one index probe on `invariant_violations_open`). Returns whether any was restored.
 */
export async function recordInvariantRestored(trx: SagaTrx, runId: string): Promise<boolean> {
  const r = await sql<{ definition: string }>`
    WITH restored AS (
      UPDATE invariant_violations SET restored_at = now()
       WHERE run_id = ${runId} AND restored_at IS NULL
      RETURNING definition_name, extract(epoch FROM restored_at - detected_at)::float8 AS seconds)
    INSERT INTO invariant_violation_counts AS c (definition, violations, restored, restore_seconds)
    SELECT definition_name, 0, count(*), sum(seconds) FROM restored GROUP BY definition_name
    ON CONFLICT (definition) DO UPDATE
       SET restored = c.restored + excluded.restored,
           restore_seconds = c.restore_seconds + excluded.restore_seconds
    RETURNING c.definition`.execute(trx);
  return r.rows.length > 0;
}
