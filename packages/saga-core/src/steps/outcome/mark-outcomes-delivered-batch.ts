import { sql } from 'kysely';
import type { SagaDb } from '../../db/connect.js';
import { markDeliveredUnderLock } from './mark-outcome-delivered.js';

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
 * <markDeliveredUnderLock: the marks and the cursor moves, one statement>
 * ```
 *
 * Two statements, not one: the cursor must be computed after the lock is granted, with a snapshot that sees
 * every delivery of the run committed before it, and READ COMMITTED gives each statement its own snapshot
 * (taken when it starts, so the locking statement's would predate the wait). Runs are locked in
 * `run_id` order, so concurrent groups cannot deadlock. The rule this form keeps with
 * `markOutcomeDelivered`: README.md here.
 */
export async function markOutcomesDelivered(db: SagaDb, items: readonly DeliveredOutcome[]): Promise<void> {
  if (items.length === 0) return;
  const runs = [...new Map(items.map((i) => [i.runId, i.tenantId])).entries()];
  const runIds = runs.map(([runId]) => runId);
  const tenantIds = runs.map(([, tenantId]) => tenantId);
  await db.transaction().execute(async (trx) => {
    await sql`
      SELECT 1 FROM runs r
        JOIN unnest(${runIds}::text[], ${tenantIds}::text[]) AS t(run_id, tenant_id)
          ON r.run_id = t.run_id AND r.tenant_id = t.tenant_id
       ORDER BY r.run_id FOR UPDATE OF r`.execute(trx);
    await markDeliveredUnderLock(trx, items);
  });
}
