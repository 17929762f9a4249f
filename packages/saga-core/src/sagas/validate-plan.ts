import { createHash } from 'node:crypto';
import { InvalidArgsError, PlanInvalidError } from '../errors/errors.js';
import type { AnyTool } from '../tools/define-tool.js';
import { parseCallArgs } from '../tools/parse-args.js';
import { ToolClass } from '../tools/tool-class.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { canonicalJson } from '../util/canonical-json.js';
import { ancestorsOf } from './dependency-order.js';
import { pivotStepOf, type SagaDefinition } from './define-saga.js';

/** One entry of a run's plan as stored: a declared step of the definition and its parsed arguments. */
export interface PlanEntry {
  readonly step: string;
  readonly args: Record<string, unknown>;
}

/** A plan as a model proposes it (`POST /v1/runs { plan }`): not yet checked against the definition. */
export interface ProposedPlanEntry {
  readonly step: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/**
 * Checks a model's plan against the run's definition, entry by entry, and refuses the first entry that does
 * not fit (`PlanInvalidError`, 400 PLAN_INVALID, `field` naming it):
 * - its `step` is a step the definition declares (`plan[2].step`);
 * - a step is listed once, unless the definition declares it `repeatable` (`plan[3].step`);
 * - its `args` pass the step's tool's schema (`plan[3].args.amount`); the stored plan keeps the parsed ones;
 * - dependency order is kept: no step is listed before a step it depends on, directly or not (the entry
 *   named is the one listed too early, `plan[1].step`);
 * - an irreversible step (other than the pivot) is listed after the pivot: the pivot approval covers it.
 *
 * Steps the plan leaves out are not required: a plan says what the agent means to do, and the definition
 * what it may do. Pure steps (reads) may be listed; their calls leave no row and are not matched.
 */
export function validatePlan(
  definition: SagaDefinition,
  tools: ToolRegistry,
  plan: readonly ProposedPlanEntry[],
): PlanEntry[] {
  const byId = new Map(definition.steps.map((s) => [s.id, s]));
  const pivot = pivotStepOf(definition);
  const entries: PlanEntry[] = [];
  plan.forEach((entry, i) => {
    const at = `plan[${i}]`;
    const step = byId.get(entry.step);
    if (!step)
      throw new PlanInvalidError(
        `${at}.step`,
        `${JSON.stringify(entry.step)} is not a step of ${definition.name}@${definition.version} ` +
          `(its steps: ${definition.steps.map((s) => s.id).join(', ')})`,
      );
    const earlier = plan.findIndex((e) => e.step === entry.step);
    if (earlier < i && !step.repeatable)
      throw new PlanInvalidError(
        `${at}.step`,
        `lists ${step.id} a second time (plan[${earlier}]); the definition does not declare it repeatable`,
      );
    const ancestors = ancestorsOf(definition.steps, step.id);
    const later = plan.findIndex((e, k) => k > i && ancestors.has(e.step));
    if (later !== -1)
      throw new PlanInvalidError(
        `${at}.step`,
        `${step.id} depends on ${plan[later]!.step}, which the plan lists after it (plan[${later}])`,
      );
    const tool = tools.get(step.tool)!;
    if (tool.class === ToolClass.IRREVERSIBLE && step !== pivot) {
      const pivotAt = pivot ? plan.findIndex((e) => e.step === pivot.id) : -1;
      if (pivotAt === -1 || pivotAt > i)
        throw new PlanInvalidError(
          `${at}.step`,
          `${step.id} is irreversible and the plan lists no pivot (${pivot?.id ?? 'none declared'}) before it`,
        );
    }
    entries.push({ step: step.id, args: parseEntryArgs(tool, entry.args, at) });
  });
  return entries;
}

/** The entry's arguments parsed by its tool's schema; a refusal names `plan[i].args.<field>`. */
function parseEntryArgs(tool: AnyTool, args: unknown, at: string): Record<string, unknown> {
  try {
    return parseCallArgs(tool, args);
  } catch (err) {
    if (!(err instanceof InvalidArgsError)) throw err;
    const first = err.issues[0]?.message ?? err.message;
    throw new PlanInvalidError(
      `${at}.${err.field}`,
      first,
      err.issues.map((x) => ({ field: `${at}.${x.field}`, message: x.message })),
    );
  }
}

/** The plan's hash, as the run view and a pivot approval show it: sha256 of its canonical JSON, hex. */
export function planHash(plan: readonly PlanEntry[]): string {
  return createHash('sha256').update(canonicalJson(plan)).digest('hex');
}
