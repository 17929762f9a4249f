import type { SagaTrx } from '../../db/connect.js';
import type { StepRow } from '../../db/schema.js';
import { ApprovalKind, ApprovalStatus } from '../approvals/approval-status.js';
import { lockRunById } from '../../runs/run-rows.js';
import { RunStatus } from '../../runs/run-status.js';
import { StepEventKind } from '../../steps/step-event-kind.js';
import { StepStatus } from '../../steps/step-status.js';
import { openCase } from '../cases/open-case.js';
import { transitionRun } from '../../runs/transition-run.js';
import { transitionStep } from '../../steps/transition-step.js';
import { checkCommitDeadline, type CommitDeadline } from './commit-deadline.js';
import { releaseHeldStep } from '../approvals/release-held-step.js';
import type { InvariantCheck } from '../../sagas/check-run-invariant.js';
import { gateOnInvariant } from '../../sagas/gate-on-invariant.js';

/** What {@link advanceCommit} did. */
export type CommitProgress =
  /** The run has no approved pivot going forward (none staged, pending, unwinding or finished). */
  | { readonly kind: 'none' }
  /** The next commit step was released (INTENDED, with its outbox message). */
  | { readonly kind: 'released'; readonly stepIdx: number }
  /** A commit step is on its way (INTENDED, UNKNOWN, NOT_EXECUTED): its outcome decides what is next. */
  | { readonly kind: 'waiting'; readonly stepIdx: number }
  /** Every commit step is CONFIRMED: the run ended COMPLETED or COMMITTED_WITH_REPAIR. */
  | { readonly kind: 'finished'; readonly status: RunStatus }
  /** A commit step cannot finish by itself: the run went to MANUAL_INTERVENTION with a case. */
  | { readonly kind: 'stopped'; readonly stepIdx: number }
  /**
   * Every commit step is CONFIRMED, but the run is bound to a definition whose invariant must be checked
   * first, and no usable check was given (none, one that could not answer, or one about other steps): the
   * run stays RUNNING; the caller checks outside this transaction and calls again (`followUpRun`).
   */
  | { readonly kind: 'verifying'; readonly why: string }
  /** Every commit step is CONFIRMED and the invariant failed: MANUAL_INTERVENTION with a case. */
  | { readonly kind: 'violated'; readonly clause: string };

/** Statuses a commit step passes through only when something went wrong and was repaired. */
const REPAIR_MARKS: readonly string[] = [
  StepStatus.UNKNOWN,
  StepStatus.NOT_EXECUTED,
  StepStatus.MANUAL_INTERVENTION,
];

/**
 * Moves an approved pivot forward, in the caller's transaction: the commit steps run one at a time, in step
 * order, each through the intent log. Called whenever a commit step may have settled (the approval itself,
 * the executor, the reconciler, an operator's resolution) and by the reconciler's sweep, so a crash between
 * a step's outcome and this call only delays the next step. Idempotent: every move is a compare-and-set.
 *
 * After the pivot a run only rolls forward. An UNKNOWN step is the reconciler's (same key, re-sent once
 * proven absent); a step that FAILED definitively, or that needs a person, stops the run in
 * MANUAL_INTERVENTION with a case, never a pretend rollback. When every commit step is CONFIRMED the run
 * ends COMPLETED, or COMMITTED_WITH_REPAIR when any of them needed reconciling, a re-send or a person.
 *
 * A commit step is released only within what the person approved: while the approval's deadline and every
 * staged hold's window still hold, on the database clock (`checkCommitDeadline`). Past them nothing more
 * is released: the commit steps not yet sent become REJECTED (never sent), and the run stops in
 * MANUAL_INTERVENTION with a case whose evidence names the deadline or the hold that passed.
 *
 * A run bound to a definition with an invariant ends only on a `check` made before this transaction
 * (`checkRunInvariant`) about the steps as they stand: it holds → the end above; it fails →
 * MANUAL_INTERVENTION with the clause in `statusReason` and a case (not COMMITTED_WITH_REPAIR: after the
 * pivot nothing is undone, and the real systems contradict the log, which only a person can sort out);
 * without such a check → `verifying`, the run stays RUNNING and the follow-up checks and calls again.
 */
export async function advanceCommit(
  trx: SagaTrx,
  runId: string,
  schema: string,
  check?: InvariantCheck,
): Promise<CommitProgress> {
  const run = await lockRunById(trx, runId);
  if (!run || run.pivot_idx === null || run.status !== RunStatus.RUNNING) return { kind: 'none' };
  const approval = await trx
    .selectFrom('approvals')
    .select(['id', 'decided_by'])
    .where('run_id', '=', runId)
    .where('kind', '=', ApprovalKind.PIVOT)
    .where('status', '=', ApprovalStatus.APPROVED)
    .executeTakeFirst();
  if (!approval) return { kind: 'none' };
  const steps = await trx
    .selectFrom('saga_log')
    .selectAll()
    .where('run_id', '=', runId)
    .where('approval_id', '=', approval.id)
    .orderBy('step_idx')
    .execute();
  for (const s of steps) {
    switch (s.status) {
      case StepStatus.CONFIRMED:
        continue;
      case StepStatus.AWAITING_APPROVAL: {
        const deadline = await checkCommitDeadline(trx, approval.id);
        if (deadline.kind === 'passed') {
          await stopPastDeadline(trx, run.tenant_id, approval.id, s, steps, deadline, schema);
          return { kind: 'stopped', stepIdx: s.step_idx };
        }
        await releaseHeldStep(trx, {
          runId,
          stepIdx: s.step_idx,
          cause: `pivot ${approval.id}: next commit step`,
          schema,
        });
        return { kind: 'released', stepIdx: s.step_idx };
      }
      case StepStatus.INTENDED:
      case StepStatus.UNKNOWN:
      case StepStatus.NOT_EXECUTED:
        return { kind: 'waiting', stepIdx: s.step_idx };
      case StepStatus.FAILED:
      case StepStatus.MANUAL_INTERVENTION:
      case StepStatus.REJECTED:
        await stop(trx, run.tenant_id, s);
        return { kind: 'stopped', stepIdx: s.step_idx };
      default: {
        const never: never = s.status;
        throw new Error(`unhandled step status ${String(never)}`);
      }
    }
  }
  const repaired = await trx
    .selectFrom('step_events')
    .select('step_idx')
    .where('run_id', '=', runId)
    .where(
      'step_idx',
      'in',
      steps.map((s) => s.step_idx),
    )
    .where('kind', '=', StepEventKind.TRANSITION)
    .where('to_status', 'in', REPAIR_MARKS)
    .limit(1)
    .executeTakeFirst();
  const gate = await gateOnInvariant(trx, run, RunStatus.COMPLETED, check);
  if (gate.kind === 'recheck') return { kind: 'verifying', why: gate.why };
  if (gate.kind === 'violated') {
    await transitionRun(trx, {
      runId,
      to: RunStatus.MANUAL_INTERVENTION,
      onlyFrom: [RunStatus.RUNNING],
      reason: `every commit step of pivot ${approval.id} is confirmed, but the ${gate.reason}`,
    });
    return { kind: 'violated', clause: gate.clause };
  }
  const status = repaired ? RunStatus.COMMITTED_WITH_REPAIR : RunStatus.COMPLETED;
  await transitionRun(trx, {
    runId,
    to: status,
    onlyFrom: [RunStatus.RUNNING],
    reason: repaired
      ? `every commit step of pivot ${approval.id} is confirmed; step ${repaired.step_idx} needed repair`
      : `every commit step of pivot ${approval.id} is confirmed`,
  });
  return { kind: 'finished', status };
}

/**
 * The approval's deadline or a staged hold's window passed before commit step `next` was released: every
 * commit step still AWAITING_APPROVAL becomes REJECTED (never sent), the run stops in MANUAL_INTERVENTION,
 * and a case on `next` carries the deadline, the lapsed holds and the database time they were read at.
 */
async function stopPastDeadline(
  trx: SagaTrx,
  tenantId: string,
  approvalId: string,
  next: StepRow,
  steps: readonly StepRow[],
  d: Extract<CommitDeadline, { kind: 'passed' }>,
  schema: string,
): Promise<void> {
  const what = d.deadlinePassed
    ? `the approval's deadline ${d.deadline.toISOString()} passed`
    : `the hold of ${d.lapsedHolds.map((h) => `step ${String(h.stepIdx)} (${String(h.tool)})`).join(', ')} ended`;
  const why = `pivot ${approvalId}: ${what} before commit step ${next.step_idx} (${next.tool}) was released; nothing more was sent`;
  const unreleased = steps.filter((x) => x.status === StepStatus.AWAITING_APPROVAL);
  for (const x of unreleased)
    await transitionStep(trx, {
      runId: x.run_id,
      stepIdx: x.step_idx,
      to: StepStatus.REJECTED,
      onlyFrom: [StepStatus.AWAITING_APPROVAL],
      cause: `withdrawn: ${why}`,
      detail: { approvalId, deadline: d.deadline.toISOString(), now: d.now.toISOString() },
      schema,
    });
  await stopAfterPivot(trx, tenantId, next, why, {
    approvalId,
    deadline: d.deadline.toISOString(),
    deadlinePassed: d.deadlinePassed,
    lapsedHolds: d.lapsedHolds,
    checkedAt: d.now.toISOString(),
    unreleased: unreleased.map((x) => ({ stepIdx: x.step_idx, tool: x.tool, key: x.idempotency_key })),
  });
}

async function stop(trx: SagaTrx, tenantId: string, s: StepRow): Promise<void> {
  const why =
    s.status === StepStatus.FAILED
      ? `commit step ${s.step_idx} (${s.tool}) failed definitively after the pivot`
      : `commit step ${s.step_idx} (${s.tool}) is ${s.status} after the pivot`;
  await stopAfterPivot(trx, tenantId, s, why, {
    status: s.status,
    error: s.error,
    attempts: s.attempts,
    key: s.idempotency_key,
  });
}

/**
 * Stops the run in MANUAL_INTERVENTION with a case on step `at` saying `why`: past the pivot the earlier
 * commit steps stand (a run never rolls back after its pivot), so what is left goes to a person.
 */
async function stopAfterPivot(
  trx: SagaTrx,
  tenantId: string,
  at: StepRow,
  why: string,
  evidence: Record<string, unknown>,
): Promise<void> {
  await transitionRun(trx, {
    runId: at.run_id,
    to: RunStatus.MANUAL_INTERVENTION,
    onlyFrom: [RunStatus.RUNNING],
    reason: `${why}; the earlier commit steps stand (a run never rolls back after its pivot)`,
  });
  await openCase(trx, { runId: at.run_id, stepIdx: at.step_idx, tenantId, reason: why, evidence });
}
