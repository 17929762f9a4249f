import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../../db/connect.js';
import type { ApprovalRow } from '../../db/schema.js';
import {
  ApprovalDecidedError,
  ApprovalExpiredError,
  ApprovalHashMismatchError,
  RunNotRunningError,
} from '../../errors/errors.js';
import { lockReviewItem } from '../lock-review-item.js';
import { startUnwind } from '../../compensations/request-unwind.js';
import { ApprovalKind, ApprovalStatus } from './approval-status.js';
import { EXECUTING_RUN_STATUSES, OPEN_RUN_STATUSES, RunStatus } from '../../runs/run-status.js';
import { transitionRun } from '../../runs/transition-run.js';
import { advanceCommit } from '../pivot/advance-commit.js';
import { releaseHeldStep } from './release-held-step.js';
import {
  approvedStepsIn,
  closeApproval,
  refuseApprovedSteps,
  type RefusalStatus,
} from './settle-approval.js';
import { releaseHeldCompensation } from './hold-compensation.js';
import { wakeCompensators } from '../../compensations/wake-compensators.js';
import { redispatchStep } from '../../steps/redispatch/redispatch-step.js';
import { StepStatus } from '../../steps/step-status.js';
import { stopForPerson } from '../cases/stop-for-person.js';
import type { Decider } from '../decider.js';

export const Decision = { APPROVE: 'approve', REJECT: 'reject' } as const;
export type Decision = (typeof Decision)[keyof typeof Decision];

/** A decision on an approval; who decides (`actor`, `tokenId`, see {@link Decider}) is recorded on it. */
export interface DecisionInput extends Decider {
  readonly tenantId: string;
  readonly approvalId: string;
  readonly decision: Decision;
  /** The hash of the proposal the person saw; it must be the hash of what will execute. */
  readonly hash: string;
  readonly comment: string | null;
  /** Who decides (the operator token's name); recorded on the approval and its event. */
  readonly actor: string;
  readonly schema: string;
}

/**
 * The result of a decision. `expired`: the deadline had passed, so the approval was expired instead (and
 * its run unwound, for a pivot); the caller commits that, then answers 410 with `error`.
 */
export type DecisionResult =
  | { readonly kind: 'decided'; readonly approval: ApprovalRow }
  | { readonly kind: 'expired'; readonly approval: ApprovalRow; readonly error: ApprovalExpiredError };

/**
 * Whether a run still waits for a decision on an approval of this kind: a pivot's run waits in
 * AWAITING_APPROVAL (nothing else releases it); a held step's run must still be going forward
 * (`EXECUTING_RUN_STATUSES`: a COMPENSATING run's forward approvals were withdrawn when it unwound,
 * `startUnwind`); a held compensation's run is COMPENSATING (its unwind waits for it); a renewal's run is
 * any open run (its recovery may be a re-dispatch going forward or an unwind). A terminal run waits for
 * nothing, and a decision on one of its approvals is refused.
 */
export function runWaitsForApproval(kind: ApprovalKind, runStatus: RunStatus): boolean {
  switch (kind) {
    case ApprovalKind.PIVOT:
      return runStatus === RunStatus.AWAITING_APPROVAL;
    case ApprovalKind.STEP:
      return (EXECUTING_RUN_STATUSES as readonly RunStatus[]).includes(runStatus);
    case ApprovalKind.COMPENSATION:
      return runStatus === RunStatus.COMPENSATING;
    case ApprovalKind.RENEWAL:
      return OPEN_RUN_STATUSES.includes(runStatus);
    default: {
      const never: never = kind;
      throw new Error(`unhandled approval kind ${String(never)}`);
    }
  }
}

/**
 * One operator's decision on one approval, in the caller's transaction. The run and the approval are locked
 * first (`lockReviewItem`), so two tabs deciding at once are serialised: the second finds it decided. Refusals, checked in this
 * order, write nothing: another tenant's or a missing approval (NotFoundError), an expired one
 * (ApprovalExpiredError), one a person decided already (ApprovalDecidedError), a pending or superseded one
 * whose run no longer waits for it, e.g. unwound (RunNotRunningError, 409 RUN_NOT_RUNNING: read under the
 * run's lock, so an unwind and a decision never both win), a superseded one (ApprovalDecidedError), a hash
 * that is not the proposal's (ApprovalHashMismatchError). An approval past its deadline is expired, not
 * decided (see {@link DecisionResult}).
 *
 * Approving a pivot moves its run AWAITING_APPROVAL → RUNNING and releases the first commit step; the
 * others follow one by one (see `advanceCommit`). Approving a held step releases it; a held compensation
 * goes back to the compensator, to be sent once; a renewal lets recovery go on (`resumeRecovery`). Every
 * approval approved renews the run's authority: `runs.authority_at` moves to the decision time. Rejecting
 * refuses every covered step (a held compensation is never sent); a rejected pivot unwinds its run, a
 * rejected renewal stops it for a person (MANUAL_INTERVENTION with a case).
 */
export async function decideApproval(trx: SagaTrx, d: DecisionInput): Promise<DecisionResult> {
  const runId = await lockReviewItem(trx, 'approvals', d.approvalId, d.tenantId);
  const run = await trx
    .selectFrom('runs')
    .select('status')
    .where('run_id', '=', runId)
    .executeTakeFirstOrThrow();
  const { past_deadline, ...approval } = await trx
    .selectFrom('approvals')
    .selectAll()
    .select(sql<boolean>`expires_at <= now()`.as('past_deadline'))
    .where('id', '=', d.approvalId)
    .executeTakeFirstOrThrow();
  if (approval.status === ApprovalStatus.EXPIRED)
    throw new ApprovalExpiredError(approval.id, approval.expires_at);
  if (approval.status === ApprovalStatus.APPROVED || approval.status === ApprovalStatus.REJECTED)
    throw new ApprovalDecidedError(approval.id, approval.status);
  if (!runWaitsForApproval(approval.kind, run.status))
    throw new RunNotRunningError(
      runId,
      run.status,
      `no longer waits for approval ${approval.id} (${approval.status}); nothing was decided`,
    );
  if (approval.status !== ApprovalStatus.PENDING)
    throw new ApprovalDecidedError(approval.id, approval.status);
  if (past_deadline) {
    const expired = await expireApproval(trx, approval, d.schema);
    return {
      kind: 'expired',
      approval: expired,
      error: new ApprovalExpiredError(approval.id, approval.expires_at),
    };
  }
  if (d.hash !== approval.hash) throw new ApprovalHashMismatchError(approval.id, d.hash);

  if (d.decision === Decision.REJECT) {
    const closed = await closeApproval(trx, {
      approval,
      to: ApprovalStatus.REJECTED,
      actor: d.actor,
      tokenId: d.tokenId ?? null,
      comment: d.comment,
    });
    if (!closed) throw new ApprovalDecidedError(approval.id, 'decided');
    await refuseApprovedSteps(trx, closed, ApprovalStatus.REJECTED, d.actor, d.schema);
    await unwindRefusedPivot(trx, closed, ApprovalStatus.REJECTED, d.actor, d.schema);
    await stopRefusedRenewal(trx, closed, ApprovalStatus.REJECTED, d.actor, d.schema);
    return { kind: 'decided', approval: closed };
  }

  const closed = await closeApproval(trx, {
    approval,
    to: ApprovalStatus.APPROVED,
    actor: d.actor,
    tokenId: d.tokenId ?? null,
    comment: d.comment,
  });
  if (!closed) throw new ApprovalDecidedError(approval.id, 'decided');
  // A person's approval is the run's authority, granted again now (the database's clock).
  await trx
    .updateTable('runs')
    .set({ authority_at: sql<Date>`now()` })
    .where('run_id', '=', closed.run_id)
    .execute();
  switch (closed.kind) {
    case ApprovalKind.PIVOT:
      await transitionRun(trx, {
        runId: closed.run_id,
        to: RunStatus.RUNNING,
        onlyFrom: [RunStatus.AWAITING_APPROVAL],
        reason: `pivot ${closed.id} approved by ${d.actor}; running its commit steps`,
        actor: d.actor,
      });
      await advanceCommit(trx, closed.run_id, d.schema);
      break;
    case ApprovalKind.STEP:
      for (const stepIdx of closed.steps)
        await releaseHeldStep(trx, {
          runId: closed.run_id,
          stepIdx,
          cause: `approval ${closed.id} approved by ${d.actor}`,
          actor: d.actor,
          schema: d.schema,
        });
      break;
    case ApprovalKind.COMPENSATION:
      await releaseHeldCompensation(trx, closed, d.actor, d.schema);
      break;
    case ApprovalKind.RENEWAL:
      await resumeRecovery(trx, closed, run.status, d.actor, d.schema);
      break;
    default: {
      const never: never = closed.kind;
      throw new Error(`unhandled approval kind ${String(never)}`);
    }
  }
  return { kind: 'decided', approval: closed };
}

/**
 * A renewal approved: recovery goes on under the renewed authority, in the decision's transaction. An
 * unwinding run's compensators are woken (they find the authority renewed and send the plan); for a run
 * going forward, each step of the plan still NOT_EXECUTED is sent again with its key and stored arguments,
 * as a person's re-dispatch (`redispatchStep`, `by: person`: the person saw the plan and chose to send).
 */
async function resumeRecovery(
  trx: SagaTrx,
  approval: ApprovalRow,
  runStatus: RunStatus,
  actor: string,
  schema: string,
): Promise<void> {
  if (runStatus === RunStatus.COMPENSATING) return wakeCompensators(trx, schema, approval.run_id);
  for (const stepIdx of await approvedStepsIn(trx, approval, StepStatus.NOT_EXECUTED))
    await redispatchStep(trx, {
      runId: approval.run_id,
      stepIdx,
      cause: `renewal ${approval.id} approved by ${actor}: re-dispatch of a step proven not executed`,
      schema,
      by: { kind: 'person', actor },
    });
}

/**
 * A refused renewal (rejected or expired; not superseded, which an unwind or a stop withdrew) stops its run
 * for a person, in the caller's transaction: MANUAL_INTERVENTION with a case carrying the recovery plan that
 * was not sent (`stopForPerson`, which also withdraws what else waits). A run no longer open is left alone.
 */
async function stopRefusedRenewal(
  trx: SagaTrx,
  approval: ApprovalRow,
  status: Exclude<RefusalStatus, typeof ApprovalStatus.SUPERSEDED>,
  actor: string | null,
  schema: string,
): Promise<void> {
  if (approval.kind !== ApprovalKind.RENEWAL) return;
  const run = await trx
    .selectFrom('runs')
    .select(['status', 'tenant_id'])
    .where('run_id', '=', approval.run_id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (!OPEN_RUN_STATUSES.includes(run.status)) return;
  await stopForPerson(trx, {
    runId: approval.run_id,
    tenantId: run.tenant_id,
    reason:
      `renewal ${approval.id} of the run's lapsed authority ${status}` +
      `${actor ? ` by ${actor}` : ''}${approval.comment ? `: ${approval.comment}` : ''}; its recovery plan was not sent`,
    evidence: {
      approvalId: approval.id,
      status,
      decidedBy: actor,
      planHash: approval.hash,
      recoveryPlan: approval.evidence.recoveryPlan ?? null,
      recovery: approval.evidence.recovery ?? null,
    },
    onlyFrom: OPEN_RUN_STATUSES,
    actor,
    schema,
  });
}

/**
 * Expires a pending approval whose deadline passed, in the caller's transaction (the decision path and the
 * reconciler's expiry sweep): its steps become REJECTED and a pivot's run unwinds, releasing its holds.
 * An approval no longer pending is returned as it is.
 */
export async function expireApproval(
  trx: SagaTrx,
  approval: ApprovalRow,
  schema: string,
): Promise<ApprovalRow> {
  const closed = await closeApproval(trx, {
    approval,
    to: ApprovalStatus.EXPIRED,
    actor: null,
    comment: `deadline ${approval.expires_at.toISOString()} passed`,
  });
  if (!closed) return approval;
  await refuseApprovedSteps(trx, closed, ApprovalStatus.EXPIRED, null, schema);
  await unwindRefusedPivot(trx, closed, ApprovalStatus.EXPIRED, null, schema);
  await stopRefusedRenewal(trx, closed, ApprovalStatus.EXPIRED, null, schema);
  return closed;
}

/**
 * A refused pivot (rejected or expired; not superseded, which a newer pivot replaces) unwinds its run, in
 * the caller's transaction: AWAITING_APPROVAL → COMPENSATING through `startUnwind` (which also withdraws any
 * other approval of the run), and the compensator releases the holds and deletes the drafts staged before
 * it, so nothing reaches the customer. A held step's refusal leaves its run as it is.
 */
async function unwindRefusedPivot(
  trx: SagaTrx,
  approval: ApprovalRow,
  status: Exclude<RefusalStatus, typeof ApprovalStatus.SUPERSEDED>,
  actor: string | null,
  schema: string,
): Promise<void> {
  if (approval.kind !== ApprovalKind.PIVOT) return;
  const run = await trx
    .selectFrom('runs')
    .select('status')
    .where('run_id', '=', approval.run_id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (run.status !== RunStatus.AWAITING_APPROVAL) return;
  await startUnwind(trx, {
    runId: approval.run_id,
    reason:
      status === ApprovalStatus.EXPIRED
        ? `unwind: pivot ${approval.id} expired before anyone decided (its holds would lapse)`
        : `unwind: pivot ${approval.id} rejected by ${actor ?? 'an operator'}${approval.comment ? `: ${approval.comment}` : ''}`,
    onlyFrom: [RunStatus.AWAITING_APPROVAL],
    actor,
    withdrawnBecause: `withdrawn: run unwound after pivot ${approval.id} was ${status}`,
    schema,
  });
}

/**
 * The expiry sweep: expires up to `limit` pending approvals past their deadline, each in its own
 * transaction that locks the run first, then the approval (the order every decision uses, so a sweep and
 * a decision never wait on each other), and checks again that it is still pending and due: a decision that
 * won the lock first leaves nothing to expire. Returns the ids it expired.
 */
export async function expireDueApprovals(db: SagaDb, schema: string, limit = 50): Promise<string[]> {
  const due = await db
    .selectFrom('approvals')
    .select(['id', 'run_id'])
    .where('status', '=', ApprovalStatus.PENDING)
    .where('expires_at', '<=', sql<Date>`now()`)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  const expired: string[] = [];
  for (const d of due) {
    const done = await db.transaction().execute(async (trx) => {
      await trx.selectFrom('runs').select('run_id').where('run_id', '=', d.run_id).forUpdate().execute();
      const row = await trx
        .selectFrom('approvals')
        .selectAll()
        .where('id', '=', d.id)
        .where('status', '=', ApprovalStatus.PENDING)
        .where('expires_at', '<=', sql<Date>`now()`)
        .forUpdate()
        .executeTakeFirst();
      if (!row) return false;
      await expireApproval(trx, row, schema);
      return true;
    });
    if (done) expired.push(d.id);
  }
  return expired;
}
