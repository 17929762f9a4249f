import { sql } from 'kysely';
import { dbNowPlus, type SagaTrx } from '@agent-saga/core';

/** Parameters of {@link rescheduleReconcile}. */
export interface Reschedule {
  readonly runId: string;
  readonly stepIdx: number;
  /** The reconciler whose lease is released; the row must still be its own. */
  readonly owner: string;
  /** Look again no earlier than this many ms from now (by the database's clock); omit to leave it. */
  readonly inMs?: number;
  /** Look again no earlier than this instant; omit to leave it. */
  readonly at?: Date;
  /** The new count of failed lookups; omit to leave it. */
  readonly lookupErrors?: number;
}

/**
 * Releases a reconcile lease without a change of status and says when to look again:
 *
 * ```sql
 * UPDATE saga_log SET reconcile_lease_until = NULL, reconcile_lease_owner = NULL,
 *        next_reconcile_at = $next, reconcile_attempts = $errors
 *  WHERE run_id = $run AND step_idx = $step AND reconcile_lease_owner = $owner;
 * ```
 *
 * Scheduling columns only, never `status` or `updated_at`: the step's state and its lag clock are not
 * touched. Runs in the caller's transaction, which holds the row lock.
 */
export async function rescheduleReconcile(trx: SagaTrx, r: Reschedule): Promise<void> {
  const next =
    r.inMs !== undefined
      ? dbNowPlus(r.inMs)
      : r.at !== undefined
        ? sql<Date>`${r.at}::timestamptz`
        : undefined;
  await trx
    .updateTable('saga_log')
    .set({
      reconcile_lease_until: null,
      reconcile_lease_owner: null,
      ...(next !== undefined ? { next_reconcile_at: next } : {}),
      ...(r.lookupErrors !== undefined ? { reconcile_attempts: r.lookupErrors } : {}),
    })
    .where('run_id', '=', r.runId)
    .where('step_idx', '=', r.stepIdx)
    .where('reconcile_lease_owner', '=', r.owner)
    .execute();
}
