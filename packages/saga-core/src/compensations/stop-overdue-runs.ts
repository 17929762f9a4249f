import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../db/connect.js';
import { ApprovalStatus } from '../review/approvals/approval-status.js';
import { lockLivePivot } from '../review/pivot/lock-pivot.js';
import { stopForPerson } from '../review/cases/stop-for-person.js';
import { RunStatus } from '../runs/run-status.js';
import { startUnwind } from './request-unwind.js';

/** The reason an overdue run unwinds with, as `unwindReasonOf` reads it back: `deadline passed`. */
export const DEADLINE_UNWIND_REASON = 'unwind requested: deadline passed';

/** What {@link stopOverdueRun} did to one run. */
export type OverdueStop = 'unwound' | 'stopped' | 'not-due';

/** The run statuses a deadline stops (the predicate of the partial index `runs_deadline`, migration 0013). */
const STOPPED_BY_DEADLINE = [RunStatus.RUNNING, RunStatus.AWAITING_APPROVAL] as const;

/**
 * The deadline rule (issue 12), for one run, in the caller's transaction: a run whose `deadline_at` has
 * passed (the database's clock) while RUNNING or AWAITING_APPROVAL stops.
 *
 * - Its policy says `unwindOnFailure` and no approved pivot binds it → it unwinds, as `POST /unwind` does
 *   (`startUnwind`: COMPENSATING, pending approvals withdrawn, unclaimed steps withdrawn, compensators
 *   woken), reason "deadline passed".
 * - Otherwise → MANUAL_INTERVENTION with a case for the whole run (`stopForPerson`). An approved pivot is
 *   never rolled back (after it a run only rolls forward), so a run past its pivot goes to a person even
 *   when its policy would unwind it.
 *
 * The run is locked first and read again: a run that moved meanwhile, or whose deadline has not passed by
 * the database's clock, is `not-due` and nothing is written.
 */
export async function stopOverdueRun(trx: SagaTrx, runId: string, schema: string): Promise<OverdueStop> {
  const run = await trx
    .selectFrom('runs')
    .selectAll()
    .select(sql<boolean>`deadline_at IS NOT NULL AND deadline_at <= now()`.as('overdue'))
    .where('run_id', '=', runId)
    .forUpdate()
    .executeTakeFirst();
  if (!run?.overdue || !(STOPPED_BY_DEADLINE as readonly RunStatus[]).includes(run.status)) return 'not-due';
  const deadline = run.deadline_at!.toISOString();
  const pivot = await lockLivePivot(trx, runId);
  const pivotApproved = pivot?.status === ApprovalStatus.APPROVED;
  if (run.policy.unwindOnFailure && !pivotApproved) {
    await startUnwind(trx, {
      runId,
      reason: DEADLINE_UNWIND_REASON,
      onlyFrom: STOPPED_BY_DEADLINE,
      withdrawnBecause: `withdrawn: run unwound: deadline ${deadline} passed`,
      schema,
    });
    return 'unwound';
  }
  await stopForPerson(trx, {
    runId,
    tenantId: run.tenant_id,
    reason:
      `deadline ${deadline} passed while ${run.status}; ` +
      (pivotApproved
        ? `its pivot ${pivot.id} was approved, so it only rolls forward: not unwound`
        : 'its policy does not unwind it (unwindOnFailure)'),
    evidence: { deadline, status: run.status, budget: run.budget, pivotId: pivot?.id ?? null },
    onlyFrom: STOPPED_BY_DEADLINE,
    schema,
  });
  return 'stopped';
}

/**
 * The sweep's read: open runs whose deadline has passed, most overdue first. Its predicate is the partial
 * index `runs_deadline`'s (migration 0013), spelled with the same literals, so the planner can answer it from
 * the index alone (checked by `deadline-sweep.test.ts`).
 */
export function overdueRunsQuery(limit: number) {
  return sql<{ run_id: string }>`
    SELECT run_id FROM runs
     WHERE deadline_at IS NOT NULL AND status IN ('RUNNING', 'AWAITING_APPROVAL') AND deadline_at <= now()
     ORDER BY deadline_at
     LIMIT ${limit}`;
}

/**
 * The deadline sweep: up to `limit` runs whose deadline has passed while RUNNING or AWAITING_APPROVAL, the
 * most overdue first, each stopped in its own transaction (`stopOverdueRun`). The query's predicate is the
 * partial index `runs_deadline`'s, spelled as literals so the planner uses it: the sweep reads only open
 * runs with a deadline, in deadline order, and stops at the first one not due; an unbound run costs it
 * nothing. Returns what it did, by run.
 */
export async function stopOverdueRuns(
  db: SagaDb,
  schema: string,
  limit = 50,
): Promise<{ readonly runId: string; readonly stop: OverdueStop }[]> {
  const due = await overdueRunsQuery(limit).execute(db);
  const done: { runId: string; stop: OverdueStop }[] = [];
  for (const { run_id } of due.rows) {
    const stop = await db.transaction().execute((trx) => stopOverdueRun(trx, run_id, schema));
    if (stop !== 'not-due') done.push({ runId: run_id, stop });
  }
  return done;
}
