import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../db/connect.js';
import type { ApprovalRow } from '../db/schema.js';
import { ApprovalDecidedError, ApprovalExpiredError, ApprovalHashMismatchError } from '../errors.js';
import { lockReviewItem } from '../saga-log/lock-review-item.js';
import { ApprovalKind, ApprovalStatus, RunStatus } from '../statuses.js';
import { transitionRun } from '../saga-log/transition-run.js';
import { advanceCommit } from './advance-commit.js';
import { releaseHeldStep } from './release-held-step.js';
import { closeApproval, refuseApprovedSteps } from './settle-approval.js';

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
 * One operator's decision on one approval, in the caller's transaction. The run and the approval are locked
 * first (`lockReviewItem`), so two tabs deciding at once are serialised: the second finds it decided. Refusals, checked in this
 * order, write nothing: another tenant's or a missing approval (NotFoundError), a decided one
 * (ApprovalDecidedError, also for superseded), a hash that is not the proposal's
 * (ApprovalHashMismatchError). An approval past its deadline is expired, not decided (see
 * {@link DecisionResult}).
 *
 * Approving a pivot moves its run AWAITING_APPROVAL → RUNNING and releases the first commit step; the
 * others follow one by one (see `advanceCommit`). Approving a held step releases it. Rejecting refuses
 * every covered step; a rejected pivot unwinds its run.
 */
export async function decideApproval(trx: SagaTrx, d: DecisionInput): Promise<DecisionResult> {
  await lockReviewItem(trx, 'approvals', d.approvalId, d.tenantId);
  const { past_deadline, ...approval } = await trx
    .selectFrom('approvals')
    .selectAll()
    .select(sql<boolean>`expires_at <= now()`.as('past_deadline'))
    .where('id', '=', d.approvalId)
    .executeTakeFirstOrThrow();
  if (approval.status === ApprovalStatus.EXPIRED)
    throw new ApprovalExpiredError(approval.id, approval.expires_at);
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
  return closed;
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
