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
 * WITH marked AS (UPDATE saga_log SET outcome_delivered = true
 *                  WHERE (run_id, step_idx) IN (…) AND status IN (<settled>) AND NOT outcome_delivered
 *                  RETURNING run_id, step_idx)
 * UPDATE runs r SET cursor = <first index from the cursor on with no delivered step, counting `marked`>
 *  WHERE run_id IN (…);
 * ```
 *
 * Two statements, not one: the cursor must be computed after the lock is granted, with a snapshot that sees
 * every delivery of the run committed before it, and READ COMMITTED gives each statement its own snapshot
 * (taken when it starts, so the locking statement's would predate the wait). The second statement cannot
 * see its own CTE's writes, so it counts the steps `marked` returns as delivered itself. Runs are locked in
 * `run_id` order, so concurrent groups cannot deadlock. The rule this form keeps with
 * `markOutcomeDelivered`: README.md here.
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
      WITH marked AS (
        UPDATE saga_log s SET outcome_delivered = true
          FROM unnest(${stepRunIds}::text[], ${stepIdxs}::int[]) AS d(run_id, step_idx)
         WHERE s.run_id = d.run_id AND s.step_idx = d.step_idx
           AND s.status = ANY(${settled}::text[]) AND NOT s.outcome_delivered
        RETURNING s.run_id, s.step_idx
      )
      UPDATE runs r SET cursor = (
          SELECT min(g)::int FROM generate_series(r.cursor, r.cursor + (
                   SELECT count(*)::int FROM saga_log s WHERE s.run_id = r.run_id AND s.step_idx >= r.cursor)) g
           WHERE NOT EXISTS (SELECT 1 FROM saga_log s
                              WHERE s.run_id = r.run_id AND s.step_idx = g AND s.outcome_delivered)
             AND NOT EXISTS (SELECT 1 FROM marked m WHERE m.run_id = r.run_id AND m.step_idx = g))
       WHERE r.run_id = ANY(${runIds}::text[])`.execute(trx);
  });
}
