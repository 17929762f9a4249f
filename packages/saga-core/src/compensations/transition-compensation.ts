import { sql, type UpdateObject } from 'kysely';
import { COMPENSATION_TRANSITIONS } from './compensation-transitions.js';
import type { SagaTrx } from '../db/connect.js';
import { compareAndSet, type CasGuard } from '../db/compare-and-set.js';
import type { CompensationRow, Database } from '../db/schema.js';
import { InvalidTransitionError } from '../errors/errors.js';
import { appendStepEvent } from '../steps/append-event.js';
import { StepEventKind } from '../steps/step-event-kind.js';
import { type CompensationStatus } from './compensation-status.js';
import { mirrorCompensationStatus } from './mirror-compensation-status.js';

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
 * Moves one step's compensation to `to`, in the caller's transaction, by compare-and-set
 * (`compareAndSet`) on the legal sources of `COMPENSATION_TRANSITIONS`:
 *
 * ```sql
 * UPDATE compensations SET status = $to, …$patch, updated_at = now() WHERE run_id = $run AND step_idx = $step
 *    AND status IN ($allowedFrom) [AND lease_owner = $owner] [AND attempts = $seen]
 *    [AND lease_until < now()] RETURNING *;
 * UPDATE saga_log SET compensation_status = $to WHERE <same step>;   -- mirrorCompensationStatus
 * INSERT INTO step_event_rows (kind = 'compensation', from, to, cause, detail);
 * ```
 *
 * The mirror on `saga_log` and the event commit with the change or not at all. Zero rows is an
 * `InvalidTransitionError` naming the status the compensation was really in; nothing is overwritten.
 *
 * The compensator's set-based statements (an attempt's claim, its outcome, the plan) make the same moves for
 * many rows at once: they take their sources from the same table (`allowedCompensationSources`) and write
 * the mirror with the same fragment.
 */
export async function transitionCompensation(
  trx: SagaTrx,
  t: CompensationTransition,
): Promise<CompensationRow> {
  const guards: CasGuard<'compensations'>[] = [];
  if (t.leaseOwner !== undefined) guards.push(['lease_owner', '=', t.leaseOwner]);
  if (t.atAttempts !== undefined) guards.push(['attempts', '=', t.atAttempts]);
  if (t.leaseExpired) guards.push(['lease_until', '<', sql<Date>`now()`]);
  const r = await compareAndSet(trx, {
    table: 'compensations',
    key: { run_id: t.runId, step_idx: t.stepIdx },
    transitions: COMPENSATION_TRANSITIONS,
    to: t.to,
    onlyFrom: t.onlyFrom,
    set: { ...t.patch, updated_at: sql<Date>`now()` },
    guards,
  });
  if (!r.moved) throw new InvalidTransitionError(t.runId, t.stepIdx, r.from, `compensation ${t.to}`);
  await mirrorCompensationStatus(
    sql`(SELECT ${t.runId}::text AS run_id, ${t.stepIdx}::int AS step_idx, ${r.row.status}::text AS status)`,
  ).execute(trx);
  await appendStepEvent(trx, {
    runId: t.runId,
    stepIdx: t.stepIdx,
    kind: StepEventKind.COMPENSATION,
    from: r.from,
    to: t.to,
    cause: t.cause,
    detail: t.detail ?? null,
  });
  return r.row;
}
