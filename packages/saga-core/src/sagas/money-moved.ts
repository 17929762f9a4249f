import type { AnyTool, MoneyContext, MoneyMove } from '../tools/define-tool.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { UsedStep } from '../runs/read-run-usage.js';
import { NEVER_TOOK_EFFECT_STATUSES } from '../steps/intent/find-duplicate-operation.js';
import type { MoneyAmounts } from './saga-budget.js';
import type { StepRow } from '../db/schema.js';

/**
 * The money a run moves, counted from what each money-moving tool declares (`moves`), in one place for the
 * budget (`budget.maxAmount`) and the forward approval (`policy.approveMoneyAbove`).
 *
 * `ctx.of`, the step a call acts on, is found by the call's arguments: the run's step whose `external_ref`
 * equals one of the call's top-level string arguments (a capture names the PaymentIntent the authorisation
 * made). Why top-level only: every connector names the effect it acts on as a plain argument, and a deeper
 * search would let free text (a reason quoting an id) pick the step.
 */
export function moneyContextOf(
  args: Readonly<Record<string, unknown>>,
  steps: readonly UsedStep[],
): MoneyContext {
  const refs = new Set(Object.values(args).filter((v): v is string => typeof v === 'string'));
  return contextOf(steps.find((s) => s.externalRef !== null && refs.has(s.externalRef)));
}

/**
 * What a compensation's `moves` reads: the forward step it undoes (`ctx.of`), from the step's row, or no
 * context when the row is gone. The compensator's approval check asks this, so forward calls and
 * compensations see a step through the same projection.
 */
export function compensationMoneyContext(
  forward: Pick<StepRow, 'tool' | 'args' | 'external_ref' | 'result'> | undefined,
): MoneyContext {
  return contextOf(forward && { ...forward, externalRef: forward.external_ref });
}

/** The step a call acts on, as `moves` may read it: its tool, stored arguments, external ref and result. */
function contextOf(step: MoneyContext['of'] | undefined): MoneyContext {
  return step
    ? { of: { tool: step.tool, args: step.args, externalRef: step.externalRef, result: step.result } }
    : {};
}

/** What one call moves (currency lower-cased), or null when its tool moves no money with these arguments. */
export function moneyOfCall(
  tool: AnyTool,
  args: Readonly<Record<string, unknown>>,
  steps: readonly UsedStep[],
): MoneyMove | null {
  if (!tool.moves) return null;
  const move = (tool.moves as (a: unknown, c: MoneyContext) => MoneyMove | null)(
    args,
    moneyContextOf(args, steps),
  );
  return move ? { currency: move.currency.toLowerCase(), amount: move.amount } : null;
}

/**
 * What the run's steps that may have taken effect moved, by lower-cased currency: every status but FAILED,
 * NOT_EXECUTED and REJECTED (the rule of `NEVER_TOOK_EFFECT_STATUSES`), so a held or unknown charge counts:
 * it may still move the money. A step whose tool this process does not register counts nothing.
 */
export function movedByRun(registry: ToolRegistry, steps: readonly UsedStep[]): MoneyAmounts {
  const never: readonly string[] = NEVER_TOOK_EFFECT_STATUSES;
  const out: Record<string, number> = {};
  for (const s of steps) {
    const tool = registry.get(s.tool);
    if (!tool || never.includes(s.status)) continue;
    const move = moneyOfCall(
      tool,
      s.args,
      steps.filter((o) => o.stepIdx !== s.stepIdx),
    );
    if (move) out[move.currency] = (out[move.currency] ?? 0) + move.amount;
  }
  return out;
}
