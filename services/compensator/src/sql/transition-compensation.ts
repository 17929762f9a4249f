import { sql } from 'kysely';
import {
  allowedCompensationSources,
  appendStepEvent,
  InvalidTransitionError,
  StepEventKind,
  type CompensationRow,
  type CompensationStatus,
  type Database,
  type SagaTrx,
} from '@agent-saga/core';
import type { UpdateObject } from 'kysely';

export interface CompensationTransition {
  readonly runId: string;
  readonly stepIdx: number;
  readonly to: CompensationStatus;
  /** Why: `compensator: tool returned`, `lookup: found by the compensation key`, … */
  readonly cause: string;
  readonly detail?: Record<string, unknown>;
  /**
   * Other columns to set with the status: values or SQL expressions, so that a lease or a due time is
   * written on the database's clock (`dbNowPlus(ms)`, `` sql`now()` ``), never the process's.
   */
  readonly patch?: Omit<UpdateObject<Database, 'compensations'>, 'status' | 'updated_at'>;
  /** Narrows the legal sources further (the status the caller saw). */
  readonly onlyFrom?: readonly CompensationStatus[];
  /** Extra guard: the attempt's lease owner must be this. */
  readonly leaseOwner?: string;
  /**
   * Extra guard: the attempt count the caller saw. With `onlyFrom` this is the row's version: a status
   * alone can come back (failed → running → failed by a second compensator), the count never does.
   */
  readonly atAttempts?: number;
  /** Extra guard: the attempt's lease has run out, by the database's clock (`lease_until < now()`). */
  readonly leaseExpired?: true;
}

/**
 * Moves one step's compensation to `to`, in the caller's transaction, by compare-and-set on the legal
 * sources of `COMPENSATION_TRANSITIONS`:
 *
 * ```sql
 * UPDATE compensations SET status = $to, … WHERE run_id = $run AND step_idx = $step
 *    AND status = ANY($allowedFrom) [AND lease_owner = $owner] [AND attempts = $seen]
 *    [AND lease_until < now()] RETURNING *;
 * UPDATE saga_log SET compensation_status = $to WHERE run_id = $run AND step_idx = $step;
 * INSERT INTO step_events (kind = 'compensation', from, to, cause, detail);
 * ```
 *
 * The mirror on `saga_log` and the event commit with the change or not at all. Zero rows is an
 * `InvalidTransitionError` naming the status the compensation was really in; nothing is overwritten.
 */
export async function transitionCompensation(
  trx: SagaTrx,
  t: CompensationTransition,
): Promise<CompensationRow> {
  const legal = allowedCompensationSources(t.to);
  const from = t.onlyFrom ? legal.filter((s) => t.onlyFrom!.includes(s)) : [...legal];
  const prev = await trx
    .selectFrom('compensations')
    .select('status')
    .where('run_id', '=', t.runId)
    .where('step_idx', '=', t.stepIdx)
    .forUpdate()
    .executeTakeFirst();
  let q = trx
    .updateTable('compensations')
    .set({ ...t.patch, status: t.to, updated_at: sql<Date>`now()` })
    .where('run_id', '=', t.runId)
    .where('step_idx', '=', t.stepIdx)
    .where('status', 'in', from.length ? from : ['__none__' as CompensationStatus]);
  if (t.leaseOwner !== undefined) q = q.where('lease_owner', '=', t.leaseOwner);
  if (t.atAttempts !== undefined) q = q.where('attempts', '=', t.atAttempts);
  if (t.leaseExpired) q = q.where('lease_until', '<', sql<Date>`now()`);
  const row = prev ? await q.returningAll().executeTakeFirst() : undefined;
  if (!row)
    throw new InvalidTransitionError(t.runId, t.stepIdx, prev?.status ?? null, `compensation ${t.to}`);
  await trx
    .updateTable('saga_log')
    .set({ compensation_status: t.to })
    .where('run_id', '=', t.runId)
    .where('step_idx', '=', t.stepIdx)
    .execute();
  await appendStepEvent(trx, {
    runId: t.runId,
    stepIdx: t.stepIdx,
    kind: StepEventKind.COMPENSATION,
    from: prev!.status,
    to: t.to,
    cause: t.cause,
    detail: t.detail ?? null,
  });
  return row;
}
