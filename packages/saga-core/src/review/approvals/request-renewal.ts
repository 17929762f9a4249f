import { createHash } from 'node:crypto';
import type { SagaTrx } from '../../db/connect.js';
import type { ApprovalRow } from '../../db/schema.js';
import { canonicalJson } from '../../util/canonical-json.js';
import { ApprovalKind, ApprovalStatus } from './approval-status.js';
import { createApproval } from './create-approval.js';

/**
 * One action of a recovery plan, as the person renewing the run's authority reads it and as it will be
 * sent: a compensation (its tool, key and arguments, secrets redacted) or the re-dispatch of a forward step
 * proven not executed (its own tool, key and stored arguments).
 */
export interface RecoveryAction {
  readonly action: 'compensate' | 'redispatch';
  /** The forward step the action acts on. */
  readonly stepIdx: number;
  readonly tool: string;
  readonly key: string;
  readonly args: Record<string, unknown>;
}

/**
 * The hash a renewal is bound to: sha256 of the canonical JSON of the run and its recovery plan, in the
 * order the plan would be sent (unlike `proposalHash`, which orders by step: here the order is part of what
 * the person approves, the reverse dependency order of an unwind).
 */
export function recoveryPlanHash(runId: string, plan: readonly RecoveryAction[]): string {
  return createHash('sha256')
    .update(canonicalJson({ runId, kind: ApprovalKind.RENEWAL, plan }))
    .digest('hex');
}

export interface RenewalRequest {
  readonly tenantId: string;
  readonly runId: string;
  /** What recovery would send once renewed, in order. */
  readonly plan: readonly RecoveryAction[];
  /** Which recovery found the authority lapsed (`unwind: <reason>`, `re-dispatch of step 2`). */
  readonly recovery: string;
  /** When the authority was last granted, and for how long. */
  readonly authorityAt: Date;
  readonly authorityTtlMs: number;
  readonly expiresAt: Date;
}

/**
 * Asks a person to renew a run's lapsed authority, in the caller's transaction, which holds the run's lock
 * (so two recoveries of one run never both create one): the run's pending renewal if there is one (at most
 * one per run, `approvals_one_pending_renewal`), else a new `renewal` approval over the plan's steps, its
 * hash binding the plan in order (`recoveryPlanHash`), its evidence the plan itself, why recovery waits,
 * when the authority lapsed, and what the person may do. Nothing of the plan is sent before it is approved.
 *
 * Approved (`decideApproval`): the run's `authority_at` moves to the decision time and recovery goes on (the
 * compensators are woken; a step proven not executed is sent again). Rejected or expired: the run ends
 * MANUAL_INTERVENTION with a case (`stopForPerson`).
 */
export async function requestRenewal(
  trx: SagaTrx,
  r: RenewalRequest,
): Promise<{ readonly created: boolean; readonly approval: ApprovalRow }> {
  const pending = await trx
    .selectFrom('approvals')
    .selectAll()
    .where('run_id', '=', r.runId)
    .where('kind', '=', ApprovalKind.RENEWAL)
    .where('status', '=', ApprovalStatus.PENDING)
    .executeTakeFirst();
  if (pending) return { created: false, approval: pending };
  const lapsedAt = new Date(r.authorityAt.getTime() + r.authorityTtlMs);
  const hash = recoveryPlanHash(r.runId, r.plan);
  const approval = await createApproval(trx, {
    tenantId: r.tenantId,
    runId: r.runId,
    kind: ApprovalKind.RENEWAL,
    steps: r.plan.map((a) => ({
      stepIdx: a.stepIdx,
      tool: a.tool,
      toolVersion: 0,
      key: a.key,
      args: a.args,
    })),
    hash,
    summary: `renew the run's authority to recover: ${r.plan.length} action(s) (${r.recovery})`,
    evidence: {
      reason: `the run's authority lapsed at ${lapsedAt.toISOString()} (granted ${r.authorityAt.toISOString()}, for ${r.authorityTtlMs} ms); recovery waits for a person`,
      recovery: r.recovery,
      recoveryPlan: r.plan,
      planHash: hash,
      authorityAt: r.authorityAt.toISOString(),
      lapsedAt: lapsedAt.toISOString(),
      deadline: r.expiresAt.toISOString(),
      alternatives: [
        'approve: the authority is renewed from now and the plan is sent, in this order',
        'reject: nothing is sent; the run ends MANUAL_INTERVENTION with a case for a person',
        'resolve by hand: reject, then settle the run in the real systems and close its case',
      ],
    },
    expiresAt: r.expiresAt,
  });
  return { created: true, approval };
}
