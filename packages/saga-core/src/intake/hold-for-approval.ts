import type { SagaTrx } from '../db/connect.js';
import { readDbNow } from '../db/db-clock.js';
import type { ApprovalRow } from '../db/schema.js';
import { resourceOf } from '../review/approvals/approval-resource.js';
import { ApprovalKind } from '../review/approvals/approval-status.js';
import { createApproval } from '../review/approvals/create-approval.js';
import type { MoneyHold } from '../sagas/bind-call.js';
import type { IntentPlan } from '../steps/intent/plan-intent.js';
import type { AnyTool } from '../tools/define-tool.js';
import { redactArgs } from '../tools/parse-args.js';

/**
 * What a held step's approval needs of its call: the fields of the intake's `IntakeRequest` it reads (the
 * intake passes its request), declared here so that the two modules do not import each other.
 */
export interface HeldCall {
  readonly tenantId: string;
  readonly runId: string;
  readonly tool: AnyTool;
  /** Arguments already parsed by the tool's schema: the exact ones the approval binds. */
  readonly args: Record<string, unknown>;
  /** How long a held step waits for its approval (APPROVAL_TTL_MS). */
  readonly approvalTtlMs: number;
}

/**
 * The approval of one held step outside a pivot (an irreversible call, one whose compensation cannot be
 * built, or one that moves more money than its run's `approveMoneyAbove`: `money`), written in the intake transaction before the step row that points to it. It binds the exact
 * arguments and key that will execute; approving it releases the step, rejecting or letting it expire
 * leaves it REJECTED.
 */
export async function holdForApproval(
  trx: SagaTrx,
  req: HeldCall,
  stepIdx: number,
  plan: IntentPlan,
  money: MoneyHold | null = null,
): Promise<ApprovalRow> {
  // The deadline on the database's clock, the one the expiry sweep and the decision compare with `now()`.
  const expiresAt = new Date((await readDbNow(trx)).getTime() + req.approvalTtlMs);
  return createApproval(trx, {
    tenantId: req.tenantId,
    runId: req.runId,
    kind: ApprovalKind.STEP,
    steps: [
      {
        stepIdx,
        tool: req.tool.name,
        toolVersion: req.tool.version,
        key: plan.idempotencyKey,
        args: req.args,
      },
    ],
    summary: `${req.tool.name} (${req.tool.class}) held: ${plan.holdReason ?? 'needs a person'}`,
    evidence: {
      action: { tool: req.tool.name, class: req.tool.class, args: redactArgs(req.tool, req.args) },
      resource: resourceOf(req.args),
      audience: plan.audience,
      staged: [],
      ...(money
        ? {
            reason: money.reason,
            money: { currency: money.currency, amount: money.amount, limit: money.limit },
          }
        : {}),
      residualRisk: residualRiskOf(req.tool, plan, money),
      deadline: expiresAt.toISOString(),
    },
    expiresAt,
  });
}

/** What may still go wrong once the held call is approved and sent, in the approver's words. */
function residualRiskOf(tool: AnyTool, plan: IntentPlan, money: MoneyHold | null): string {
  if (plan.holdReason === 'irreversible tool')
    return `${tool.name} cannot be undone once sent; only a correction can follow it`;
  if (money)
    return (
      `${tool.name} moves ${money.amount} ${money.currency} once sent; an unwind compensates it, but the ` +
      'money has moved in the meantime'
    );
  return `${tool.name} has no compensation for these arguments; it cannot be undone automatically`;
}
