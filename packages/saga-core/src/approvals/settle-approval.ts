import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import type { ApprovalRow } from '../db/schema.js';
import { ApprovalKind, ApprovalStatus, RunStatus, StepEventKind, StepStatus } from '../statuses.js';
import { appendStepEvent } from '../saga-log/append-event.js';
import { unwindChannel } from '../saga-log/request-unwind.js';
import { transitionRun } from '../saga-log/transition-run.js';
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
 * What a refused approval (rejected, expired or superseded) means for its steps and run, in the caller's
 * transaction: every covered step still AWAITING_APPROVAL becomes REJECTED (nothing was sent). A refused
 * pivot (not a superseded one, which a newer pivot replaces) unwinds the run: it moves to COMPENSATING,
 * and the compensator releases the holds and deletes the drafts staged before it, so nothing reaches the
 * customer.
 */
export async function refuseApprovedSteps(
  trx: SagaTrx,
  approval: ApprovalRow,
  status: RefusalStatus,
  actor: string | null,
  schema: string,
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
      cause: `approval ${approval.id} ${status}`,
      actor,
      schema,
    });
  }
  if (approval.kind !== ApprovalKind.PIVOT || status === ApprovalStatus.SUPERSEDED) return;
  const run = await trx
    .selectFrom('runs')
    .select('status')
    .where('run_id', '=', approval.run_id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (run.status !== RunStatus.AWAITING_APPROVAL) return;
  await transitionRun(trx, {
    runId: approval.run_id,
    to: RunStatus.COMPENSATING,
    reason:
      status === ApprovalStatus.EXPIRED
        ? `unwind: pivot ${approval.id} expired before anyone decided (its holds would lapse)`
        : `unwind: pivot ${approval.id} rejected by ${actor ?? 'an operator'}${approval.comment ? `: ${approval.comment}` : ''}`,
    actor,
  });
  await sql`SELECT pg_notify(${unwindChannel(schema)}, ${approval.run_id})`.execute(trx);
}
