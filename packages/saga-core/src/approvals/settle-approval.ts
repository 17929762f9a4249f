import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import type { ApprovalRow } from '../db/schema.js';
import { ApprovalKind, ApprovalStatus, StepEventKind, StepStatus } from '../statuses.js';
import { appendStepEvent } from '../saga-log/append-event.js';
import { transitionStep } from '../saga-log/transition-step.js';

/** A final status of an approval that releases nothing. */
export type RefusalStatus =
  typeof ApprovalStatus.REJECTED | typeof ApprovalStatus.EXPIRED | typeof ApprovalStatus.SUPERSEDED;

export interface CloseApprovalInput {
  readonly approval: ApprovalRow;
  readonly to: typeof ApprovalStatus.APPROVED | RefusalStatus;
  readonly actor: string | null;
  readonly comment: string | null;
}

/**
 * Moves a pending approval to a final status by compare-and-set (`WHERE status = 'pending'`) and records
 * the decision as an event with who and when. Returns null when it was no longer pending (someone decided
 * first): a decision is single use.
 */
export async function closeApproval(trx: SagaTrx, c: CloseApprovalInput): Promise<ApprovalRow | null> {
  const row = await trx
    .updateTable('approvals')
    .set({
      status: c.to,
      decided_by: c.actor,
      decided_at: sql<Date>`now()`,
      comment: c.comment,
    })
    .where('id', '=', c.approval.id)
    .where('status', '=', ApprovalStatus.PENDING)
    .returningAll()
    .executeTakeFirst();
  if (!row) return null;
  await appendStepEvent(trx, {
    runId: row.run_id,
    stepIdx: row.kind === ApprovalKind.STEP ? (row.steps[0] ?? null) : null,
    kind: StepEventKind.DECISION,
    from: ApprovalStatus.PENDING,
    to: c.to,
    cause: `${row.kind} approval ${row.id} ${c.to}${c.comment ? `: ${c.comment}` : ''}`,
    detail: { approvalId: row.id, hash: row.hash, steps: row.steps },
    actor: c.actor,
  });
  return row;
}

/**
 * What a refused approval (rejected, expired or superseded) means for its steps, in the caller's
 * transaction: every covered step still AWAITING_APPROVAL becomes REJECTED (nothing was sent), its event
 * naming the approval, its new status and `why` when given (`withdrawn: run unwound: …`). What it means for
 * the run is the caller's: a refused pivot unwinds it (`unwindRefusedPivot`), a superseded one does not.
 */
export async function refuseApprovedSteps(
  trx: SagaTrx,
  approval: ApprovalRow,
  status: RefusalStatus,
  actor: string | null,
  schema: string,
  why?: string,
): Promise<void> {
  for (const stepIdx of approval.steps) {
    const step = await trx
      .selectFrom('saga_log')
      .select('status')
      .where('run_id', '=', approval.run_id)
      .where('step_idx', '=', stepIdx)
      .executeTakeFirst();
    if (step?.status !== StepStatus.AWAITING_APPROVAL) continue;
    await transitionStep(trx, {
      runId: approval.run_id,
      stepIdx,
      to: StepStatus.REJECTED,
      onlyFrom: [StepStatus.AWAITING_APPROVAL],
      cause: `approval ${approval.id} ${status}${why ? `: ${why}` : ''}`,
      actor,
      schema,
    });
  }
}
