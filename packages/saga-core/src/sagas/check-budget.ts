import type { RunBudget } from '../db/schema.js';
import { BudgetExceededError } from '../errors/errors.js';
import type { RunUsage } from '../runs/read-run-usage.js';
import type { MoneyMove } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { movedByRun } from './money-moved.js';

/**
 * A run's budget, checked in the intake transaction (under the run lock) before a new step is written;
 * the first limit the step would pass is refused, `409 BUDGET_EXCEEDED` with `field` naming it, nothing
 * written. In this order:
 * - `budget.deadline`: a call at or after it (the database's clock, `usage.now`). A run waiting past it is
 *   stopped by the deadline sweep (another slice); this only refuses calls;
 * - `budget.maxSteps`: the run's side-effecting steps (saga-log rows, whatever their status) plus this one;
 * - `budget.maxAttempts`: every send of the run plus this step's first: the sum of `saga_log.attempts`
 *   (first sends and re-dispatches: each executor claim counts one) and the agent's retries of existing
 *   steps (`RETRY_CALL` events). Why retries count although a retry of a settled step sends nothing: a
 *   looping agent spends the budget either way, and this is the bound on how long it may loop;
 * - `budget.maxAmount.<cur>`: what the run's steps that may have taken effect move, plus what this call
 *   moves (`movedByRun`, `moves` of each tool), against the currency's limit; a currency the budget does
 *   not name is not limited.
 */
export function checkBudget(
  budget: RunBudget,
  deadlineAt: Date | null,
  usage: RunUsage,
  registry: ToolRegistry,
  move: MoneyMove | null,
): void {
  checkDeadline(deadlineAt, usage);
  if (budget.maxSteps !== undefined && usage.steps.length + 1 > budget.maxSteps)
    throw new BudgetExceededError(
      'budget.maxSteps',
      budget.maxSteps,
      usage.steps.length,
      `the run has taken ${usage.steps.length} of its ${budget.maxSteps} steps; this call would pass it`,
    );
  checkAttempts(budget, usage);
  if (budget.maxAmount && move) {
    const limit = budget.maxAmount[move.currency];
    if (limit === undefined) return;
    const moved = movedByRun(registry, usage.steps)[move.currency] ?? 0;
    if (moved + move.amount > limit)
      throw new BudgetExceededError(
        `budget.maxAmount.${move.currency}`,
        limit,
        moved,
        `the run has moved ${moved} ${move.currency} (minor units) of its ${limit}; this call moves ` +
          `${move.amount} more`,
      );
  }
}

/** The deadline alone (`budget.deadline`): also what a re-dispatching retry is held to. */
export function checkDeadline(deadlineAt: Date | null, usage: Pick<RunUsage, 'now'>): void {
  if (deadlineAt && usage.now.getTime() >= deadlineAt.getTime())
    throw new BudgetExceededError(
      'budget.deadline',
      deadlineAt.toISOString(),
      usage.now.toISOString(),
      `the run's deadline ${deadlineAt.toISOString()} has passed; it takes no more calls`,
    );
}

/**
 * `budget.maxAttempts` for one more send: a new step's first, or the re-dispatch an agent's retry of a
 * step proven NOT_EXECUTED makes. A retry that sends nothing (of a settled or in-flight step) is never
 * refused by it (the agent must be able to read the step's outcome), but its RETRY_CALL counts later. A
 * retry that re-dispatches counts twice in the end (its RETRY_CALL and the executor's attempt): the bound
 * errs towards stopping a looping agent early.
 */
export function checkAttempts(budget: RunBudget, usage: RunUsage): void {
  if (budget.maxAttempts === undefined) return;
  const sent = usage.steps.reduce((n, s) => n + s.attempts, 0) + usage.retries;
  if (sent + 1 > budget.maxAttempts)
    throw new BudgetExceededError(
      'budget.maxAttempts',
      budget.maxAttempts,
      sent,
      `the run has made ${sent} of its ${budget.maxAttempts} attempts (sends and agent retries); this ` +
        'call would pass it',
    );
}
