import { randomUUID } from 'node:crypto';
import type { SagaTrx } from '../../db/connect.js';
import type { ApprovalRow } from '../../db/schema.js';
import { ApprovalStatus, type ApprovalKind } from './approval-status.js';
import { proposalHash, type ProposedStep } from './proposal-hash.js';

export interface NewApproval {
  readonly tenantId: string;
  readonly runId: string;
  readonly kind: ApprovalKind;
  /** The steps it covers, exactly as they will execute. */
  readonly steps: readonly ProposedStep[];
  readonly summary: string | null;
  /** What the approver needs to decide: the action, the resource, its audience, what is staged, the risk. */
  readonly evidence: Record<string, unknown>;
  readonly expiresAt: Date;
  /**
   * The hash the decision must carry, when it is not `proposalHash` of `steps`: a renewal binds its
   * recovery plan in its order (`recoveryPlanHash`). Default: `proposalHash(runId, steps)`.
   */
  readonly hash?: string;
}

/**
 * Writes a pending approval, in the caller's transaction (the same one that writes the steps it covers,
 * which point back to it with `saga_log.approval_id`). Its id is random, never derived from input.
 */
export async function createApproval(trx: SagaTrx, a: NewApproval): Promise<ApprovalRow> {
  return trx
    .insertInto('approvals')
    .values({
      id: `apr_${randomUUID()}`,
      tenant_id: a.tenantId,
      run_id: a.runId,
      kind: a.kind,
      status: ApprovalStatus.PENDING,
      hash: a.hash ?? proposalHash(a.runId, a.steps),
      steps: a.steps.map((s) => s.stepIdx),
      summary: a.summary,
      evidence: JSON.stringify(a.evidence),
      expires_at: a.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
