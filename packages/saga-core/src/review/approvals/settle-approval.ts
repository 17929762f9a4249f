import type { SagaTrx } from '../../db/connect.js';
import type { ApprovalRow } from '../../db/schema.js';
import { InvalidApprovalTransitionError } from '../../errors/errors.js';
import { StepStatus } from '../../steps/step-status.js';
import { ApprovalKind, type ApprovalStatus } from './approval-status.js';
import { refuseHeldCompensation } from './hold-compensation.js';
import { transitionStep } from '../../steps/transition-step.js';
import { transitionApproval } from './transition-approval.js';

/** A final status of an approval that releases nothing. */
export type RefusalStatus =
  typeof ApprovalStatus.REJECTED | typeof ApprovalStatus.EXPIRED | typeof ApprovalStatus.SUPERSEDED;

export interface CloseApprovalInput {
  readonly approval: ApprovalRow;
  readonly to: typeof ApprovalStatus.APPROVED | RefusalStatus;
  readonly actor: string | null;
  /** The deciding token's id (see `Decider`); null or absent for the harness's own moves. */
  readonly tokenId?: string | null | undefined;
  readonly comment: string | null;
}

/**
 * Moves a pending approval to a final status (`transitionApproval`: compare-and-set on `pending`, with its
 * decision event). Returns null when it was no longer pending (someone decided first): a decision is
 * single use.
 */
export async function closeApproval(trx: SagaTrx, c: CloseApprovalInput): Promise<ApprovalRow | null> {
  try {
    return await transitionApproval(trx, {
      id: c.approval.id,
      to: c.to,
      actor: c.actor,
      tokenId: c.tokenId ?? null,
      comment: c.comment,
    });
  } catch (err) {
    if (err instanceof InvalidApprovalTransitionError) return null;
    throw err;
  }
}

/**
 * What a refused approval (rejected, expired or superseded) means for its steps, in the caller's
 * transaction: every covered step still AWAITING_APPROVAL becomes REJECTED (nothing was sent), its event
 * naming the approval, its new status and `why` when given (`withdrawn: run unwound: …`). A refused
 * `compensation` approval covers no forward step that waits: its compensation is failed for good instead,
 * never sent (`refuseHeldCompensation`); a `renewal` covers no held step at all. What it means for the run
 * is the caller's: a refused pivot unwinds it (`unwindRefusedPivot`), a refused renewal stops it for a
 * person (`stopRefusedRenewal`), a superseded one does neither.
 */
export async function refuseApprovedSteps(
  trx: SagaTrx,
  approval: ApprovalRow,
  status: RefusalStatus,
  actor: string | null,
  schema: string,
  why?: string,
): Promise<void> {
  if (approval.kind === ApprovalKind.COMPENSATION)
    return refuseHeldCompensation(trx, approval, status, actor, schema);
  if (approval.kind === ApprovalKind.RENEWAL) return;
  for (const stepIdx of await approvedStepsIn(trx, approval, StepStatus.AWAITING_APPROVAL)) {
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

/**
 * The steps an approval covers that are in `status` now, ascending: the ones a decision on it still acts on
 * (a refusal rejects those still held; a renewal re-sends those still not executed).
 */
export async function approvedStepsIn(
  trx: SagaTrx,
  approval: ApprovalRow,
  status: StepStatus,
): Promise<number[]> {
  if (approval.steps.length === 0) return [];
  const rows = await trx
    .selectFrom('saga_log')
    .select('step_idx')
    .where('run_id', '=', approval.run_id)
    .where('step_idx', 'in', approval.steps)
    .where('status', '=', status)
    .orderBy('step_idx')
    .execute();
  return rows.map((r) => r.step_idx);
}
