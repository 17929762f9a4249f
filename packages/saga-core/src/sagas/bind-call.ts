import type { RunRow } from '../db/schema.js';
import { approvalNeed, recoveryPolicyOf } from '../review/approvals/recovery-policy.js';
import { NotInDefinitionError, PlanMismatchError } from '../errors/errors.js';
import type { UsedStep, RunUsage } from '../runs/read-run-usage.js';
import { NEVER_TOOK_EFFECT_STATUSES } from '../steps/intent/find-duplicate-operation.js';
import type { AnyTool, MoneyMove } from '../tools/define-tool.js';
import { readPath } from '../tools/parse-args.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { canonicalJson } from '../util/canonical-json.js';
import { checkBudget } from './check-budget.js';
import type { SagaDefinition, SagaStep } from './define-saga.js';
import { moneyOfCall } from './money-moved.js';
import type { SagaRegistry } from './saga-registry.js';
import type { PlanEntry } from './validate-plan.js';

/** A forward call held for a person because it moves more than the run's `policy.approveMoneyAbove`. */
export interface MoneyHold {
  /** The step's hold reason, as its approval's summary says it. */
  readonly reason: string;
  /** Lower-cased currency and amounts in minor units: what the call moves and the policy's limit. */
  readonly currency: string;
  readonly amount: number;
  readonly limit: number;
}

/** What the rules of a governed run decided about a new step that they let through. */
export interface CallBinding {
  /** The definition step the call was matched to (`saga_log.step_id`); null on a run without definition. */
  readonly stepId: string | null;
  /** Set when the call must wait for an approval of kind `step` before it is sent. */
  readonly hold: MoneyHold | null;
}

export interface BindCallInput {
  readonly run: RunRow;
  readonly tool: AnyTool;
  /** Parsed by the tool's schema. */
  readonly args: Readonly<Record<string, unknown>>;
  readonly definitions: SagaRegistry | undefined;
  readonly registry: ToolRegistry;
  /** The run's steps, retries and the database's clock, read under the run lock (`readRunUsage`). */
  readonly usage: RunUsage;
}

/**
 * The rules a governed run (`runs.governed`) applies to a **new** step, in the intake transaction under
 * the run lock, before anything is written; each refusal throws and writes nothing:
 * 1. the definition allows the tool (`409 NOT_IN_DEFINITION`) and the call is matched to a definition
 *    step: with a plan, the first planned entry of a step of this tool not yet taken by an earlier call;
 *    without, the first declared step of the tool not yet taken (a `repeatable` step is never used up).
 *    "Taken": a step of the run matched to it that may have taken effect (not FAILED, NOT_EXECUTED or
 *    REJECTED, the duplicate rule's statuses), so a failed step can be called again as a new one;
 * 2. with a plan, the call's identity arguments (the tool's `identity`; its whole arguments when it
 *    declares none) equal the planned entry's (`409 PLAN_MISMATCH` naming `args.<field>`); other
 *    arguments may differ (a reworded reason);
 * 3. the budget (`checkBudget`: `409 BUDGET_EXCEEDED`);
 * 4. `policy.approveMoneyAbove`: a call that moves more than the currency's limit is held for approval.
 */
export function bindCall(input: BindCallInput): CallBinding {
  const { run, tool, args, usage } = input;
  const definition = run.definition_name === null ? undefined : requireDefinition(input.definitions, run);
  const stepId = definition ? matchStep(definition, run, tool, args, usage.steps) : null;
  const move = moneyOfCall(tool, args, usage.steps);
  checkBudget(run.budget, run.deadline_at, usage, input.registry, move);
  return { stepId, hold: moneyHold(run, move) };
}

/**
 * The definition a bound run names, as this process loaded it; refused (`NOT_IN_DEFINITION`) when the tool
 * module no longer declares it: nothing can be matched against a definition this process does not know.
 */
export function requireDefinition(definitions: SagaRegistry | undefined, run: RunRow): SagaDefinition {
  const name = run.definition_name!;
  const version = run.definition_version!;
  const found = definitions?.get(name, version);
  if (!found)
    throw new NotInDefinitionError(
      '(any)',
      { name, version },
      'this dispatcher does not load the definition',
    );
  return found;
}

/**
 * Whether a bound run's definition declares a `repeatable` step of `tool`: the business action may rightly
 * be taken again in this run, so a new step repeating an earlier step's operation is not refused as a
 * replanned duplicate (`DUPLICATE_OPERATION`), as for a tool declared `repeatable` itself. False on an
 * unbound run and for a tool the definition does not name (`bindCall` refuses that one).
 */
export function definitionRepeats(
  definitions: SagaRegistry | undefined,
  run: RunRow,
  tool: AnyTool,
): boolean {
  if (run.definition_name === null) return false;
  return requireDefinition(definitions, run).steps.some((s) => s.tool === tool.name && s.repeatable);
}

/** A call of `tool` on a bound run: refused unless a step of the definition uses the tool. */
export function requireToolInDefinition(definition: SagaDefinition, tool: AnyTool): readonly SagaStep[] {
  const steps = definition.steps.filter((s) => s.tool === tool.name);
  if (steps.length === 0)
    throw new NotInDefinitionError(
      tool.name,
      { name: definition.name, version: definition.version },
      `the definition allows only ${[...new Set(definition.steps.map((s) => s.tool))].join(', ')}`,
    );
  return steps;
}

function matchStep(
  definition: SagaDefinition,
  run: RunRow,
  tool: AnyTool,
  args: Readonly<Record<string, unknown>>,
  steps: readonly UsedStep[],
): string {
  const candidates = requireToolInDefinition(definition, tool);
  const taken = takenCounts(steps);
  const ref = { name: definition.name, version: definition.version };
  if (run.plan === null) {
    const free = candidates.find((s) => s.repeatable || (taken.get(s.id) ?? 0) === 0);
    if (!free)
      throw new NotInDefinitionError(
        tool.name,
        ref,
        `every step of ${tool.name} in the definition is taken (${candidates.map((s) => s.id).join(', ')})`,
      );
    return free.id;
  }
  const ids = new Set(candidates.map((s) => s.id));
  // The nth planned entry of a step is taken when n earlier calls were matched to that step.
  const seen = new Map<string, number>();
  let entry: { readonly at: number; readonly planned: PlanEntry } | undefined;
  run.plan.forEach((planned, at) => {
    if (entry || !ids.has(planned.step)) return;
    const n = seen.get(planned.step) ?? 0;
    seen.set(planned.step, n + 1);
    if (n >= (taken.get(planned.step) ?? 0)) entry = { at, planned };
  });
  if (!entry)
    throw new PlanMismatchError(
      tool.name,
      null,
      ['tool'],
      `tool: the run's plan has no entry left for ${tool.name} (planned: ${run.plan.map((p) => p.step).join(', ')})`,
    );
  const differing = identityDiff(tool, args, entry.planned.args);
  if (differing.length > 0)
    throw new PlanMismatchError(
      tool.name,
      entry.at,
      differing,
      `${differing.join(', ')}: differ from the run's plan (plan[${entry.at}], step ${entry.planned.step}); ` +
        'the plan is what was approved to run: call it as planned, or create a run with a new plan',
    );
  return entry.planned.step;
}

/** Calls of the run matched to each definition step that may have taken effect. */
function takenCounts(steps: readonly UsedStep[]): Map<string, number> {
  const never: readonly string[] = NEVER_TOOK_EFFECT_STATUSES;
  const taken = new Map<string, number>();
  for (const s of steps)
    if (s.stepId !== null && !never.includes(s.status)) taken.set(s.stepId, (taken.get(s.stepId) ?? 0) + 1);
  return taken;
}

/** `args.<path>` for each identity path whose value differs (compared as canonical JSON); `args` whole without. */
function identityDiff(
  tool: AnyTool,
  args: Readonly<Record<string, unknown>>,
  planned: Readonly<Record<string, unknown>>,
): string[] {
  const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);
  if (tool.identity.length === 0) return same(args, planned) ? [] : ['args'];
  return tool.identity.filter((p) => !same(readPath(args, p), readPath(planned, p))).map((p) => `args.${p}`);
}

function moneyHold(run: RunRow, move: MoneyMove | null): MoneyHold | null {
  // One rule for both directions (forward calls here, compensations in the compensator): `approvalNeed`.
  const need = approvalNeed(recoveryPolicyOf(run.policy), { deletes: false }, move);
  if (need?.kind !== 'money') return null;
  const currency = need.move.currency.toLowerCase();
  return {
    reason: `moves ${need.move.amount} ${currency} (minor units), above the run's approveMoneyAbove of ${need.limit}`,
    currency,
    amount: need.move.amount,
    limit: need.limit,
  };
}
