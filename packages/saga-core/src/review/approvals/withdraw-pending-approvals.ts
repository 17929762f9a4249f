import type { SagaTrx } from '../../db/connect.js';
import type { ApprovalRow } from '../../db/schema.js';
import { ApprovalStatus } from './approval-status.js';
import { closeApproval, refuseApprovedSteps } from './settle-approval.js';

export interface WithdrawApprovalsInput {
  readonly runId: string;
  /** Why nobody may decide them any more; kept as each approval's comment and on its steps' events. */
  readonly why: string;
  readonly actor?: string | null;
  readonly schema: string;
}

/**
 * Closes every pending approval of a run, of any kind (a pivot, a held step), in the caller's transaction,
 * which holds the run's lock (the order every decision takes: the run, then its approvals): each becomes
 * `superseded` with `why` as its comment and a decision event, and each step it covers that is still
 * AWAITING_APPROVAL becomes REJECTED, never sent. A decision that comes later finds nothing pending.
 *
 * The one home of "an unwound run keeps no approval open" (see `startUnwind`): whatever moves a run to
 * COMPENSATING calls it, so no kind of approval needs its own copy. Returns the approvals it closed.
 */
export async function withdrawPendingApprovals(
  trx: SagaTrx,
  w: WithdrawApprovalsInput,
): Promise<ApprovalRow[]> {
  const pending = await trx
    .selectFrom('approvals')
    .selectAll()
    .where('run_id', '=', w.runId)
    .where('status', '=', ApprovalStatus.PENDING)
    .orderBy('created_at')
    .orderBy('id')
    .forUpdate()
    .execute();
  const closed: ApprovalRow[] = [];
  for (const approval of pending) {
    const row = await closeApproval(trx, {
      approval,
      to: ApprovalStatus.SUPERSEDED,
      actor: w.actor ?? null,
      comment: w.why,
    });
    if (!row) continue;
    await refuseApprovedSteps(trx, row, ApprovalStatus.SUPERSEDED, w.actor ?? null, w.schema, w.why);
    closed.push(row);
  }
  return closed;
}
