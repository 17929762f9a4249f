import { sql } from 'kysely';
import { advanceCommit } from '../review/pivot/advance-commit.js';
import type { SagaDb } from '../db/connect.js';
import { lockRunById } from './run-rows.js';
import { RunStatus } from './run-status.js';
import { StepStatus } from '../steps/step-status.js';
import { startUnwind } from '../compensations/request-unwind.js';
import {
  checkRunInvariant,
  type InvariantCheck,
  type InvariantChecker,
} from '../sagas/check-run-invariant.js';

/** What {@link followUpRun} did to a run. */
export type FollowUp =
  'none' | 'released' | 'waiting' | 'finished' | 'stopped' | 'unwound' | 'verifying' | 'violated';

/**
 * What a run does by itself once one of its steps settles, in one transaction under the run's lock:
 * - a run with an approved pivot moves forward (`advanceCommit`: the next commit step, or the end);
 * - a run whose policy is `unwindOnFailure` and that has a FAILED step before any pivot unwinds (RUNNING →
 *   COMPENSATING, the compensators woken), with the failure named in its status reason.
 * Called right after an outcome is recorded (executor, reconciler) and by the reconciler's sweep, which
 * catches a process that died between recording and following up. Idempotent.
 *
 * A bound run whose pivot's commit steps are all CONFIRMED ends only once its invariant is checked: with a
 * `checker`, the check is made after that transaction, outside any (the lookups are slow HTTP reads), and a
 * second transaction ends the run on it; without one (the executor: no vendor reads on its path) the run
 * answers `verifying` and stays RUNNING, and the reconciler's sweep, which has the lookups, ends it. A
 * check that cannot answer leaves it `verifying` for the next sweep: the vendor is asked again, never passed
 * over; a run left so for long shows in `saga_stuck_runs`, where a person sees it.
 */
export async function followUpRun(
  db: SagaDb,
  runId: string,
  schema: string,
  checker?: InvariantChecker,
): Promise<FollowUp> {
  const first = await followUpIn(db, runId, schema, undefined);
  if (first !== 'verifying' || !checker) return first;
  const check = await checkRunInvariant(db, { runId }, RunStatus.COMPLETED, checker);
  return followUpIn(db, runId, schema, check);
}

function followUpIn(
  db: SagaDb,
  runId: string,
  schema: string,
  check: InvariantCheck | undefined,
): Promise<FollowUp> {
  return db.transaction().execute(async (trx) => {
    const run = await lockRunById(trx, runId);
    if (run?.status !== RunStatus.RUNNING) return 'none';
    if (run.pivot_idx !== null) return (await advanceCommit(trx, runId, schema, check)).kind;
    if (!run.policy.unwindOnFailure) return 'none';
    const failed = await trx
      .selectFrom('saga_log')
      .select(['step_idx', 'tool', 'error'])
      .where('run_id', '=', runId)
      .where('status', '=', StepStatus.FAILED)
      .orderBy('step_idx')
      .limit(1)
      .executeTakeFirst();
    if (!failed) return 'none';
    const message = (failed.error as { message?: unknown } | null)?.message;
    // startUnwind also withdraws what still waits (held steps' approvals, unclaimed intents) and wakes the
    // compensators.
    await startUnwind(trx, {
      runId,
      onlyFrom: [RunStatus.RUNNING],
      reason:
        `unwind requested: run policy unwindOnFailure: step ${failed.step_idx} (${failed.tool}) failed` +
        (typeof message === 'string' ? `: ${message}` : ''),
      schema,
    });
    return 'unwound';
  });
}

/**
 * The sweep behind {@link followUpRun}: RUNNING runs with a pivot, or with `unwindOnFailure` and a FAILED
 * step, oldest change first (partial index `runs_open`). Returns how many runs it moved.
 */
export async function sweepRunFollowUps(
  db: SagaDb,
  schema: string,
  limit = 100,
  checker?: InvariantChecker,
): Promise<number> {
  const due = await sql<{ run_id: string }>`
    SELECT r.run_id FROM runs r
     WHERE r.status = ${RunStatus.RUNNING}
       AND (r.pivot_idx IS NOT NULL
            OR ((r.policy->>'unwindOnFailure')::boolean IS TRUE
                AND EXISTS (SELECT 1 FROM saga_log s WHERE s.run_id = r.run_id AND s.status = ${StepStatus.FAILED})))
     ORDER BY r.updated_at
     LIMIT ${limit}`.execute(db);
  let moved = 0;
  for (const r of due.rows) {
    const did = await followUpRun(db, r.run_id, schema, checker);
    if (did !== 'none' && did !== 'waiting' && did !== 'verifying') moved++;
  }
  return moved;
}
