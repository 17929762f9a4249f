import type { SagaTrx } from '../../db/connect.js';
import type { ApprovalRow } from '../../db/schema.js';
import { ApprovalKind, ApprovalStatus } from '../approvals/approval-status.js';

/**
 * The run's pivot that still counts, locked for the rest of the transaction: the pending one (waiting for a
 * person) or the approved one (the run rolls forward through it). At most one exists: a new pivot supersedes
 * a pending one, and an approved one refuses new proposals. The caller holds the run's lock already.
 */
export async function lockLivePivot(trx: SagaTrx, runId: string): Promise<ApprovalRow | undefined> {
  return trx
    .selectFrom('approvals')
    .selectAll()
    .where('run_id', '=', runId)
    .where('kind', '=', ApprovalKind.PIVOT)
    .where('status', 'in', [ApprovalStatus.PENDING, ApprovalStatus.APPROVED])
    .forUpdate()
    .executeTakeFirst();
}
