import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import { SETTLED_STEP_STATUSES } from '../statuses.js';

/** One response that carried a step's settled outcome to its caller. */
export interface DeliveredOutcome {
  readonly tenantId: string;
  readonly runId: string;
  readonly stepIdx: number;
}

/**
 * {@link markOutcomeDelivered} for several steps (of one or many runs) in one transaction and one commit,
 * every value a bound parameter:
 *
 * ```sql
 * SELECT 1 FROM runs WHERE (run_id, tenant_id) IN (…) ORDER BY run_id FOR UPDATE;   -- lockRun, in key order
 * UPDATE saga_log SET outcome_delivered = true
 *  WHERE (run_id, step_idx) IN (…) AND status IN (<settled>) AND NOT outcome_delivered;
 * UPDATE runs r SET cursor = <first index from the cursor on with no delivered step> WHERE run_id IN (…);
 * ```
 *
 * Three statements rather than one with CTEs: the cursor update must run after the lock is granted, with a
 * snapshot that sees every delivery of the run committed before it, and READ COMMITTED gives each statement
 * its own snapshot. Runs are locked in `run_id` order, so concurrent groups cannot deadlock.
 */
export async function markOutcomesDelivered(db: SagaDb, items: readonly DeliveredOutcome[]): Promise<void> {
  if (items.length === 0) return;
  const runs = [...new Map(items.map((i) => [i.runId, i.tenantId])).entries()];
  const runIds = runs.map(([runId]) => runId);
  const tenantIds = runs.map(([, tenantId]) => tenantId);
  const stepRunIds = items.map((i) => i.runId);
  const stepIdxs = items.map((i) => i.stepIdx);
  const settled: string[] = [...SETTLED_STEP_STATUSES];
  await db.transaction().execute(async (trx) => {
    await sql`
      SELECT 1 FROM runs r
        JOIN unnest(${runIds}::text[], ${tenantIds}::text[]) AS t(run_id, tenant_id)
          ON r.run_id = t.run_id AND r.tenant_id = t.tenant_id
       ORDER BY r.run_id FOR UPDATE OF r`.execute(trx);
    await sql`
      UPDATE saga_log s SET outcome_delivered = true
        FROM unnest(${stepRunIds}::text[], ${stepIdxs}::int[]) AS d(run_id, step_idx)
       WHERE s.run_id = d.run_id AND s.step_idx = d.step_idx
         AND s.status = ANY(${settled}::text[]) AND NOT s.outcome_delivered`.execute(trx);
    await sql`
      UPDATE runs r SET cursor = (
          SELECT min(g)::int FROM generate_series(r.cursor, r.cursor + (
                   SELECT count(*)::int FROM saga_log s WHERE s.run_id = r.run_id AND s.step_idx >= r.cursor)) g
           WHERE NOT EXISTS (SELECT 1 FROM saga_log s
                              WHERE s.run_id = r.run_id AND s.step_idx = g AND s.outcome_delivered))
       WHERE r.run_id = ANY(${runIds}::text[])`.execute(trx);
  });
}
