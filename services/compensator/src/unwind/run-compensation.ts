import { lazyChildLogger, type CompensationRow, type RecoveryPolicy, type StepRow } from '@agent-saga/core';
import { attemptCompensation } from './attempt-compensation.js';
import { buildCommand } from './build-command.js';
import { checkApproval } from './check-approval.js';
import { checkBudget } from './check-budget.js';
import { checkTarget } from './check-target.js';
import type { CompensationPass } from './compensation-pass.js';
import { findTool } from './find-tool.js';
import { lookFirst } from './look-first.js';
import { recordPass } from './record-pass.js';
import type { UnwindDeps } from './unwind-deps.js';

/**
 * Advances one due compensation by one attempt, through the same intent-log discipline as a forward call,
 * as a chain of named stages. Each returns a union the next one switches on; a stage that ends the pass
 * returns `ended` with one of three explicit ends (`PassEnd`: done already, re-check later, give up), which
 * every later stage hands on untouched and the last one writes:
 *
 * 0. `findTool`: the compensation tool and the row's key; without them, give up.
 * 1. `lookFirst`, evidence first: the lookup by the compensation key. Found → done already; nothing is
 *    sent. After an unknown attempt core's one lookup rule decides (`settleFromLookup`): "not found" is
 *    believed only past the tool's lookup lag since that attempt, by the database's clock, and a re-check;
 *    before that the compensation waits (never a second refund).
 * 2. `checkBudget`: past COMPENSATION_MAX_ATTEMPTS, none confirmed, give up.
 * 3. `checkTarget`: the forward tool's precondition on the target. As the forward step left it → go on;
 *    already compensated → done already, nothing sent; changed otherwise → give up (a case: the run ends
 *    MANUAL_INTERVENTION); unreadable → wait, like an unknown outcome.
 * 4. `buildCommand`: the stored command, its `ref(key)` placeholders resolved to the external refs of the
 *    run's CONFIRMED steps, parsed by the tool's schema. A command that cannot be made: give up.
 * 4½. `checkApproval`: the run policy may want a person first (money above `approveMoneyAbove`, a
 *    deletion under `approveDeletions`): the compensation is held with its approval, nothing sent; once
 *    approved it goes on, its command checked against the approved hash.
 * 5. `attemptCompensation`: the intent (→ running with a lease and the attempt counted, committed BEFORE
 *    the call, with the lookup events of stage 1), then the call with the compensation key.
 * 6. `recordPass`: the attempt's outcome under its lease (compensated; failed: refused, retried with the
 *    same key after a backoff within the budget; unknown: looked up by key next time), or the pass's end
 *    (`endPass`), after its lookup events.
 *
 * The lookup events, the intent and the outcome go through this process's statement groups
 * (`unwind-groups.ts`), each one statement for the compensations of every run at the same point; the
 * rarer moves (an end) are one transaction each (core's `transitionCompensation`).
 *
 * Every lease, due time and give-up deadline is written and read on the database's clock (`dbNowPlus`,
 * `readDeadline`), never this process's: the reconciler and the executors judge the same rows by it.
 *
 * The run's unwind reason (`unwindReason`, from the run row) reaches the tool as `ctx.unwindReason`, so a
 * compensation that leaves a note on its target (a ticket's closing comment) can say why; the stored
 * command itself, written before the forward call, cannot know it.
 *
 * Two compensators may pass over one compensation at once (a peer whose lock session was lost while it still drove the run, an in-test driver):
 * every move from what this pass read is a compare-and-set on the status AND the attempt count it read,
 * so a pass that read a row before another attempt came and went (failed → running → failed) writes
 * nothing and sends nothing; moves after the call are guarded by this attempt's lease.
 */
export async function runCompensation(
  d: UnwindDeps,
  comp: CompensationRow,
  steps: readonly StepRow[],
  unwindReason: string | null,
  policy: RecoveryPolicy = {},
): Promise<void> {
  const log = lazyChildLogger(d.logger, {
    runId: comp.run_id,
    stepIdx: comp.step_idx,
    key: comp.idempotency_key,
  });
  const pass: CompensationPass = { comp, steps, unwindReason, policy, log };
  const tool = findTool(d, pass);
  const looked = await lookFirst(d, pass, tool);
  const budgeted = checkBudget(d, pass, looked);
  const checked = await checkTarget(d, pass, budgeted);
  const command = await checkApproval(d, pass, buildCommand(pass, checked));
  const attempted = await attemptCompensation(d, pass, command);
  await recordPass(d, pass, attempted);
}
