import {
  approvalNeed,
  compensationMoneyContext,
  proposalHash,
  redactArgs,
  resourceOf,
  ApprovalStatus,
  CompensationStatus,
  type ApprovalNeed,
  type MoneyMove,
  type ProposedStep,
  type StepRow,
} from '@agent-saga/core';
import type { CommandBuilt } from './build-command.js';
import {
  ended,
  giveUp,
  unhandled,
  type CompensationPass,
  type HoldForApproval,
} from './compensation-pass.js';
import type { UnwindDeps } from './unwind-deps.js';

/**
 * Stage 4½ of `runCompensation`, between the command and the attempt: does the run policy want a person
 * before this compensation is sent?
 *
 * - The row carries the approval that held it (`approval_id`): a person approved it, and the command about
 *   to be sent must still be the one whose hash they approved (the stored command and the refs it names
 *   never change, so a difference means something is wrong: give up, a person looks). Go on: it is sent
 *   once, under its own key.
 * - Pending, never held, and the policy holds it (`approvalNeed`: its tool `moves` more than the limit of
 *   the currency, `ctx.of` being the forward step it undoes; or its tool `deletes` under
 *   `approveDeletions`): the pass ends `hold-for-approval`, with the evidence a person decides on.
 * - Otherwise (no such rule: every unbound run) go on, with no read and no write: the unwind is as before.
 */
export async function checkApproval(
  d: UnwindDeps,
  pass: CompensationPass,
  prev: CommandBuilt,
): Promise<CommandBuilt> {
  switch (prev.kind) {
    case 'ended':
      return prev;
    case 'command':
      return decide(d, pass, prev);
    default:
      return unhandled(prev, 'stage result');
  }
}

type Command = Extract<CommandBuilt, { kind: 'command' }>;

async function decide(d: UnwindDeps, pass: CompensationPass, cmd: Command): Promise<CommandBuilt> {
  const { comp, policy } = pass;
  const proposed: ProposedStep = {
    stepIdx: comp.step_idx,
    tool: cmd.tool.name,
    toolVersion: cmd.tool.version,
    key: cmd.key,
    args: cmd.args,
  };
  if (comp.approval_id !== null) {
    const approval = await d.db
      .selectFrom('approvals')
      .select(['status', 'hash'])
      .where('id', '=', comp.approval_id)
      .executeTakeFirst();
    if (approval?.status !== ApprovalStatus.APPROVED)
      return ended(
        giveUp(`approval ${comp.approval_id} of this compensation is ${approval?.status ?? 'missing'}`),
        cmd.lookups,
      );
    if (approval.hash !== proposalHash(comp.run_id, [proposed]))
      return ended(
        giveUp(`the compensation differs from what approval ${comp.approval_id} approved; nothing sent`),
        cmd.lookups,
      );
    return cmd;
  }
  if (comp.status !== CompensationStatus.PENDING) return cmd;
  if (!policy.approveMoneyAbove && !policy.approveDeletions) return cmd;
  const forward = pass.steps.find((s) => s.step_idx === comp.step_idx);
  let move: MoneyMove | null;
  try {
    move = cmd.tool.moves?.(cmd.args, compensationMoneyContext(forward)) ?? null;
  } catch (err) {
    return ended(
      giveUp(`the money compensation ${cmd.tool.name} moves cannot be read: ${(err as Error).message}`),
      cmd.lookups,
    );
  }
  const need = approvalNeed(policy, cmd.tool, move);
  if (!need) return cmd;
  return ended(holdFor(pass, cmd, proposed, need, forward), cmd.lookups);
}

/**
 * What the person deciding a held compensation reads: the intended action (tool and arguments, secrets
 * redacted), the resource (the forward step's external ref), the forward receipt (its result), the reason
 * (the unwind's), the expected result, the residual risk, and the alternatives; the deadline is added when
 * the hold is written.
 */
function holdFor(
  pass: CompensationPass,
  cmd: Command,
  command: ProposedStep,
  need: ApprovalNeed,
  forward: StepRow | undefined,
): HoldForApproval {
  const ref = forward?.external_ref ?? null;
  const what =
    need.kind === 'money'
      ? `${cmd.tool.name} moves ${need.move.amount} ${need.move.currency.toLowerCase()} (above the limit of ${need.limit})`
      : `${cmd.tool.name} deletes ${ref ?? 'its target'}`;
  const summary = `compensation of step ${command.stepIdx} (${forward?.tool ?? 'unknown'}): ${what}`;
  return {
    kind: 'hold-for-approval',
    command,
    summary,
    evidence: {
      why: need.kind === 'money' ? 'run policy approveMoneyAbove' : 'run policy approveDeletions',
      action: { tool: cmd.tool.name, args: redactArgs(cmd.tool, cmd.args), key: cmd.key },
      ...(need.kind === 'money' ? { money: { ...need.move, limit: need.limit } } : {}),
      resource: { externalRef: ref, ...resourceOf(cmd.args) },
      forwardReceipt: forward
        ? { stepIdx: forward.step_idx, tool: forward.tool, externalRef: ref, result: forward.result }
        : null,
      reason: pass.unwindReason ?? 'the run is unwound',
      expectedResult:
        need.kind === 'money'
          ? `${need.move.amount} ${need.move.currency.toLowerCase()} returned on ${ref ?? 'the forward effect'}, once, under key ${cmd.key}`
          : `${ref ?? 'the target'} deleted, once, under key ${cmd.key}`,
      residualRisk:
        need.kind === 'money'
          ? 'money that leaves cannot be called back by the harness; rejected, the forward effect stays in place until a person acts'
          : 'what is deleted cannot be restored by the harness; rejected, it stays in place until a person acts',
      alternatives: [
        'approve: the compensation is sent once, under its own key; the unwind goes on',
        'reject: nothing is sent; a case opens for a person and the run ends as its finish rules say',
        'resolve by hand: reject, act in the real system, then close the case',
      ],
    },
  };
}
