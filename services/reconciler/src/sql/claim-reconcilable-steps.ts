import { sql } from 'kysely';
import { dbNowPlus, leaseHolderGone, StepStatus, type SagaDb, type StepRow } from '@agent-saga/core';

/** Parameters of {@link claimReconcilableSteps}. */
export interface ReconcileClaim {
  /** The reconciler taking the rows (one id per process). */
  readonly owner: string;
  /** How long the claim holds: long enough for two lookups and the re-check pause. */
  readonly leaseMs: number;
  /** At most this many rows. */
  readonly limit: number;
  /** Only the step under this key (a request for one step); otherwise any due step. */
  readonly key?: string;
  /** The saga schema: the liveness locks of lease holders are keyed by it (`leaseHolderGone`). */
  readonly schema: string;
}

/**
 * Claims up to `limit` steps that need a lookup, stamping a reconcile lease on them, in one statement:
 *
 * ```sql
 * WITH due AS (SELECT … FROM saga_log
 *               WHERE status IN ('INTENDED', 'UNKNOWN')                    -- saga_log_unsettled's predicate
 *                 AND (status = 'UNKNOWN' OR lease_until < now()           -- INTENDED: executor lease lapsed,
 *                      OR <the lease holder is gone>)                      -- or its holder died (leaseHolderGone)
 *                 AND (next_reconcile_at IS NULL OR next_reconcile_at <= now())     -- not in backoff
 *                 AND (reconcile_lease_until IS NULL OR reconcile_lease_until < now()) -- nobody on it
 *               ORDER BY lease_until NULLS FIRST, updated_at LIMIT $limit
 *               FOR UPDATE SKIP LOCKED)
 * UPDATE saga_log SET reconcile_lease_until = now() + $lease, reconcile_lease_owner = $owner FROM due …
 * RETURNING *;
 * ```
 *
 * `FOR UPDATE SKIP LOCKED`, so two reconcilers sweeping at once never claim the same row (each skips what
 * the other is claiming), and the lease, so neither takes a row the other is still looking up after the
 * claiming transaction has committed. The status list is written as literals so the planner can prove the
 * partial index `saga_log_unsettled` applies: a sweep reads (and sorts) unsettled rows only. The index is
 * keyed on columns that never change (migration 0010), so an executor's claim of a step stays a HOT update.
 * An INTENDED step whose executor lease is live, or that no executor has claimed yet, is not touched; one
 * whose executor died (its liveness lock released, `holdWorkerLiveness`) is due at once, lease or not.
 */
export async function claimReconcilableSteps(db: SagaDb, c: ReconcileClaim): Promise<StepRow[]> {
  const intended = sql.lit(StepStatus.INTENDED);
  const unknown = sql.lit(StepStatus.UNKNOWN);
  const r = await sql<StepRow>`
    WITH due AS (
      SELECT run_id, step_idx FROM saga_log
       WHERE status IN (${intended}, ${unknown})
         AND (status = ${unknown} OR lease_until < now() OR ${leaseHolderGone(c.schema)})
         AND (next_reconcile_at IS NULL OR next_reconcile_at <= now())
         AND (reconcile_lease_until IS NULL OR reconcile_lease_until < now())
         ${c.key === undefined ? sql`` : sql`AND idempotency_key = ${c.key}`}
       ORDER BY lease_until NULLS FIRST, updated_at
       LIMIT ${c.limit}
       FOR UPDATE SKIP LOCKED)
    UPDATE saga_log s
       SET reconcile_lease_until = ${dbNowPlus(c.leaseMs)},
           reconcile_lease_owner = ${c.owner}
      FROM due
     WHERE s.run_id = due.run_id AND s.step_idx = due.step_idx
    RETURNING s.*`.execute(db);
  return r.rows;
}
