import type { SagaTrx } from '../../db/connect.js';
import type { ApprovalRow } from '../../db/schema.js';
import { CompensationStatus } from '../../compensations/compensation-status.js';
import { transitionCompensation } from '../../compensations/transition-compensation.js';
import { wakeCompensators } from '../../compensations/wake-compensators.js';
import { ApprovalKind, type ApprovalStatus } from './approval-status.js';
import { createApproval } from './create-approval.js';
import type { ProposedStep } from './proposal-hash.js';

export interface CompensationHold {
  readonly tenantId: string;
  readonly runId: string;
  /** The compensation exactly as it will be sent: its forward step, tool and version, key, resolved args. */
  readonly command: ProposedStep;
  /** The compensation row's attempt count as the compensator read it (with `pending`, its version). */
  readonly seenAttempts: number;
  readonly summary: string;
  /** What the person decides on: the action, the resource, the receipt, the reason, the risk, the options. */
  readonly evidence: Record<string, unknown>;
  readonly expiresAt: Date;
}

/**
 * Holds one compensation for a person before its first send, in one transaction: a `compensation` approval
 * bound by `proposalHash` to the command as it will be sent, and the compensation pending →
 * awaiting_approval by compare-and-set on the status and attempt count the compensator read, with the
 * approval's id on the row. A row moved meanwhile throws `InvalidTransitionError`, and the approval is rolled
 * back with it: one hold per compensation, and nothing sent.
 */
export async function holdCompensation(trx: SagaTrx, h: CompensationHold): Promise<ApprovalRow> {
  const approval = await createApproval(trx, {
    tenantId: h.tenantId,
    runId: h.runId,
    kind: ApprovalKind.COMPENSATION,
    steps: [h.command],
    summary: h.summary,
    evidence: h.evidence,
    expiresAt: h.expiresAt,
  });
  await transitionCompensation(trx, {
    runId: h.runId,
    stepIdx: h.command.stepIdx,
    to: CompensationStatus.AWAITING_APPROVAL,
    onlyFrom: [CompensationStatus.PENDING],
    atAttempts: h.seenAttempts,
    cause: `held for approval ${approval.id}: ${h.summary}`,
    detail: { approvalId: approval.id, hash: approval.hash },
    patch: { approval_id: approval.id, next_attempt_at: null },
  });
  return approval;
}

/**
 * An approved compensation goes back to the compensator, in the decision's transaction: awaiting_approval
 * → pending (its approval id stays on the row: the next pass sends it once, under its own unchanged key),
 * and the compensators are woken.
 */
export async function releaseHeldCompensation(
  trx: SagaTrx,
  approval: ApprovalRow,
  actor: string,
  schema: string,
): Promise<void> {
  for (const stepIdx of approval.steps)
    await transitionCompensation(trx, {
      runId: approval.run_id,
      stepIdx,
      to: CompensationStatus.PENDING,
      onlyFrom: [CompensationStatus.AWAITING_APPROVAL],
      cause: `approval ${approval.id} approved by ${actor}: to be sent once`,
      detail: { approvalId: approval.id, hash: approval.hash, actor },
    });
  await wakeCompensators(trx, schema, approval.run_id);
}

/**
 * A compensation whose approval was refused (rejected, expired, withdrawn) is never sent, in the caller's
 * transaction: awaiting_approval → failed for good (no next attempt), the refusal as its reason, and the
 * compensators woken. When the rest of the unwind can move no further, the run's finish opens a case for
 * it and ends as the finish rules say (a compensation that needs a person: MANUAL_INTERVENTION). A row no
 * longer held (it moved meanwhile) is left alone.
 */
export async function refuseHeldCompensation(
  trx: SagaTrx,
  approval: ApprovalRow,
  status: ApprovalStatus,
  actor: string | null,
  schema: string,
): Promise<void> {
  const reason =
    `approval ${approval.id} ${status}${actor ? ` by ${actor}` : ''}` +
    `${approval.comment ? `: ${approval.comment}` : ''}; not sent, left to a person`;
  const held = await trx
    .selectFrom('compensations')
    .select(['step_idx'])
    .where('run_id', '=', approval.run_id)
    .where('step_idx', 'in', approval.steps.length ? approval.steps : [-1])
    .where('status', '=', CompensationStatus.AWAITING_APPROVAL)
    .where('approval_id', '=', approval.id)
    .execute();
  for (const { step_idx } of held)
    await transitionCompensation(trx, {
      runId: approval.run_id,
      stepIdx: step_idx,
      to: CompensationStatus.FAILED,
      onlyFrom: [CompensationStatus.AWAITING_APPROVAL],
      cause: `compensator: needs a person: ${reason}`,
      detail: { approvalId: approval.id, status },
      patch: { next_attempt_at: null, reason, lease_until: null, lease_owner: null },
    });
  if (held.length) await wakeCompensators(trx, schema, approval.run_id);
}
