import { checkPrecondition, preconditionEvidence } from '@agent-saga/core';
import { CompensationOutcome } from '../metrics/compensator-metrics.js';
import type { BudgetChecked } from './check-budget.js';
import {
  ended,
  giveUp,
  unhandled,
  type CompensationPass,
  type Ended,
  type GoingOn,
} from './compensation-pass.js';
import { giveUpOrRecheck } from './give-up-or-recheck.js';
import type { UnwindDeps } from './unwind-deps.js';

/** The target is as the forward step left it (or its tool declares no precondition): the pass may send. */
export type TargetChecked = ({ readonly kind: 'target-as-left' } & GoingOn) | Ended;

/**
 * Stage 3 of `runCompensation`: the precondition on the target, when the forward tool declares one
 * (`checkPrecondition`):
 *
 * - as the forward step left it (or no check, or no forward step to check) → go on;
 * - already in the compensated state → done already, with that evidence; nothing sent;
 * - changed in another way → nothing sent, the pass gives up (a case: the run ends MANUAL_INTERVENTION);
 * - the check cannot read the target → it waits, like an unknown outcome, and gives up once the unknown
 *   wait of the forward tool has passed since the last attempt (or the row's creation), by the database's
 *   clock.
 */
export async function checkTarget(
  d: UnwindDeps,
  pass: CompensationPass,
  prev: BudgetChecked,
): Promise<TargetChecked> {
  switch (prev.kind) {
    case 'ended':
      return prev;
    case 'within-budget':
      return checkPreconditionOf(d, pass, prev);
    default:
      return unhandled(prev, 'stage result');
  }
}

async function checkPreconditionOf(
  d: UnwindDeps,
  pass: CompensationPass,
  go: GoingOn,
): Promise<TargetChecked> {
  const { comp } = pass;
  const asLeft: TargetChecked = { ...go, kind: 'target-as-left' };
  const forward = pass.steps.find((s) => s.step_idx === comp.step_idx);
  const forwardTool = forward ? d.registry.get(forward.tool) : undefined;
  if (!forward || !forwardTool) return asLeft;
  const pre = await checkPrecondition(forwardTool, forward, pass.log);
  const evidence = { ...preconditionEvidence(pre), forwardTool: forward.tool, target: forward.external_ref };
  switch (pre.kind) {
    case 'none':
    case 'as_left':
      return asLeft;
    case 'already_compensated':
      return ended(
        {
          kind: 'done-already',
          cause: 'precondition: the target is already in the compensated state; nothing sent',
          detail: evidence,
          patch: { next_attempt_at: null, result: JSON.stringify(evidence) },
          outcome: CompensationOutcome.ALREADY_COMPENSATED,
          duplicates: false,
        },
        go.lookups,
      );
    case 'changed':
      return ended(
        giveUp(
          `the target changed since the forward step (${pre.changed}); not overwritten`,
          evidence,
          CompensationOutcome.TARGET_CHANGED,
          { name: 'PreconditionChanged', message: pre.changed, ...evidence },
        ),
        go.lookups,
      );
    case 'error':
      return giveUpOrRecheck(d, {
        since: comp.last_attempt_at ?? comp.created_at,
        tool: forwardTool,
        attemptNo: comp.attempts + 1,
        giveUpReason: `the precondition cannot be read: ${pre.error.message}`,
        evidence,
        recheckWhy: 'precondition failed',
        lookups: go.lookups,
      });
    default:
      return unhandled(pre, 'precondition');
  }
}
