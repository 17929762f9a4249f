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
import { EXECUTING_RUN_STATUSES, RunStatus } from '../../runs/run-status.js';
import { transitionRun } from '../../runs/transition-run.js';
import { advanceCommit } from '../pivot/advance-commit.js';
import { releaseHeldStep } from './release-held-step.js';
import { closeApproval, refuseApprovedSteps, type RefusalStatus } from './settle-approval.js';

export const Decision = { APPROVE: 'approve', REJECT: 'reject' } as const;
export type Decision = (typeof Decision)[keyof typeof Decision];

export interface DecisionInput {
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
 * (`EXECUTING_RUN_STATUSES`). A COMPENSATING or terminal run waits for nothing: its approvals were
 * withdrawn when it unwound (`startUnwind`), and a decision on one is refused.
 */
export function runWaitsForApproval(kind: ApprovalKind, runStatus: RunStatus): boolean {
  if (kind === ApprovalKind.PIVOT) return runStatus === RunStatus.AWAITING_APPROVAL;
  return (EXECUTING_RUN_STATUSES as readonly RunStatus[]).includes(runStatus);
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
 * others follow one by one (see `advanceCommit`). Approving a held step releases it. Rejecting refuses
 * every covered step; a rejected pivot unwinds its run.
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
      comment: d.comment,
    });
    if (!closed) throw new ApprovalDecidedError(approval.id, 'decided');
    await refuseApprovedSteps(trx, closed, ApprovalStatus.REJECTED, d.actor, d.schema);
    await unwindRefusedPivot(trx, closed, ApprovalStatus.REJECTED, d.actor, d.schema);
    return { kind: 'decided', approval: closed };
  }

  const closed = await closeApproval(trx, {
    approval,
    to: ApprovalStatus.APPROVED,
    actor: d.actor,
    comment: d.comment,
  });
  if (!closed) throw new ApprovalDecidedError(approval.id, 'decided');
  if (closed.kind === ApprovalKind.PIVOT) {
    await transitionRun(trx, {
      runId: closed.run_id,
      to: RunStatus.RUNNING,
      onlyFrom: [RunStatus.AWAITING_APPROVAL],
      reason: `pivot ${closed.id} approved by ${d.actor}; running its commit steps`,
      actor: d.actor,
    });
    await advanceCommit(trx, closed.run_id, d.schema);
  } else {
    for (const stepIdx of closed.steps)
      await releaseHeldStep(trx, {
        runId: closed.run_id,
        stepIdx,
        cause: `approval ${closed.id} approved by ${d.actor}`,
        actor: d.actor,
        schema: d.schema,
      });
  }
  return { kind: 'decided', approval: closed };
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
