import { z } from 'zod';
import { SagaDefinitionError } from '../errors/errors.js';
import { findCycle, resolveDependsOn } from './dependency-order.js';
import { sagaBudgetSchema, stepRetrySchema, type SagaBudget, type StepRetry } from './saga-budget.js';
import type { SagaInvariant } from './saga-invariant.js';
import { sagaPolicySchema, type SagaPolicy } from './saga-policy.js';

/** One declared step of a saga: which tool it calls and where it stands. */
export interface SagaStepSpec {
  /** Unique within the saga, `[a-z][a-z0-9_]*`: how a plan and a call name the step. */
  readonly id: string;
  /** A registered tool (checked when the saga is registered with the tools). */
  readonly tool: string;
  /**
   * Ids of the steps this one stands after. Absent: every step declared before it. `[]`: none. May name a
   * step declared later; a cycle is refused.
   */
  readonly dependsOn?: readonly string[];
  /**
   * The pivot: the go/no-go step, the first one a pivot approval commits (`POST /v1/runs/{id}/pivot`);
   * from it on the run only rolls forward. At most one; every irreversible step must be the pivot or
   * stand after it. Its tool must have an effect (a pure tool commits nothing).
   */
  readonly pivot?: boolean;
  /**
   * The business action may rightly be taken twice in one run (a second note on a ticket): on a bound run
   * the step is never used up by earlier calls (`bindCall` matches every call of its tool to it), and a
   * plan may list it more than once. Letting it pass the replanned-duplicate rule (`409
   * DUPLICATE_OPERATION`, today by the tool's own `repeatable`) is a later slice's.
   */
  readonly repeatable?: boolean;
  /** Stored; not enforced yet (see {@link StepRetry}). */
  readonly retry?: StepRetry;
}

/**
 * A saga definition as declared in code beside its tools:
 *
 * ```ts
 * export const refundAndReship = defineSaga({
 *   name: 'refund_and_reship',
 *   version: 1,
 *   steps: [
 *     { id: 'get_order', tool: 'get_order' },
 *     { id: 'create_ticket', tool: 'create_ticket' },
 *     { id: 'charge_card', tool: 'charge_card' },
 *     { id: 'reship', tool: 'reship' },
 *   ],
 * });
 * ```
 *
 * What is enforced: the shape (names, ids, dependencies and their order, one pivot at most) here, and at
 * registration against the tools (every tool registered, every irreversible step after the pivot). A run
 * bound to the definition (`POST /v1/runs { definition }`, core's `bindRun`) takes its `budget` and
 * `policy` as defaults under its own; its plan is checked against the steps (`validatePlan`) and its calls
 * matched to them, refused outside them, held to the plan and the budget (`bindCall`); its `invariant` is
 * checked against the real systems before it ends (`checkRunInvariant`, `gateOnInvariant`).
 */
export interface SagaSpec {
  /** `[a-z][a-z0-9_]*`; several versions of one name may be registered. */
  readonly name: string;
  /** Positive integer; `get(name)` gives the highest registered. */
  readonly version: number;
  readonly steps: readonly SagaStepSpec[];
  /**
   * What must hold in the real systems when a run of it ends, checked by lookup before the run is called
   * COMPLETED or COMPENSATED (see {@link SagaInvariant}, `checkRunInvariant`).
   */
  readonly invariant?: SagaInvariant;
  /** Defaults for the budget of the definition's runs, under each run's own (see {@link SagaBudget}). */
  readonly budget?: SagaBudget;
  /** Defaults for the policy of the definition's runs, under each run's own (see {@link SagaPolicy}). */
  readonly policy?: SagaPolicy;
}

/** A step after validation: `dependsOn` resolved (declared, or every earlier step), flags filled in. */
export interface SagaStep {
  readonly id: string;
  readonly tool: string;
  readonly dependsOn: readonly string[];
  readonly pivot: boolean;
  readonly repeatable: boolean;
  readonly retry?: StepRetry;
}

/** A saga after validation: frozen, every step resolved. Still to be registered against the tools. */
export interface SagaDefinition extends Omit<SagaSpec, 'steps'> {
  readonly steps: readonly SagaStep[];
}

const NAME = /^[a-z][a-z0-9_]*$/;
/** Why 100: a definition is a workflow a person reads and approves; a pivot commits at most 50 steps. */
export const MAX_SAGA_STEPS = 100;

const stepSchema = z
  .object({
    id: z.string().max(64).regex(NAME, 'must match [a-z][a-z0-9_]*'),
    tool: z.string().min(1, 'must name a tool'),
    dependsOn: z.array(z.string()).max(MAX_SAGA_STEPS).optional(),
    pivot: z.boolean().optional(),
    repeatable: z.boolean().optional(),
    retry: stepRetrySchema.optional(),
  })
  .strict();

const sagaSchema = z
  .object({
    name: z.string().max(100).regex(NAME, 'must match [a-z][a-z0-9_]*'),
    version: z.number().int().min(1, 'must be a positive integer'),
    steps: z.array(stepSchema).min(1, 'must declare at least one step').max(MAX_SAGA_STEPS),
    invariant: z
      .custom<SagaInvariant>((v) => typeof v === 'function', 'must be a function (run, lookups)')
      .optional(),
    budget: sagaBudgetSchema.optional(),
    policy: sagaPolicySchema.optional(),
  })
  .strict();

/** `steps[2].dependsOn[0]` from a zod path. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
}

/** `refund_and_reship@2`, or the name alone while the version is not known to be valid. */
export function sagaLabel(spec: unknown): string {
  const s = (spec ?? {}) as { name?: unknown; version?: unknown };
  const name = typeof s.name === 'string' ? s.name : String(s.name);
  return Number.isInteger(s.version) ? `${name}@${String(s.version)}` : name;
}

/**
 * Declares a saga. Fails at once, naming the field, when the spec is malformed (an unknown field, a bad
 * name), a step id repeats, a dependency names no step or names the step itself, the dependencies are
 * circular, or more than one step is the pivot. What needs the tools (a tool not registered, an
 * irreversible step before the pivot) is refused by `createSagaRegistry`.
 */
export function defineSaga(spec: SagaSpec): SagaDefinition {
  const label = sagaLabel(spec);
  const fail = (field: string, message: string): never => {
    throw new SagaDefinitionError(label, field, message);
  };
  const parsed = sagaSchema.safeParse(spec);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys')
      fail(fieldPath([...issue.path, issue.keys[0] ?? '']), 'is not a field of a saga definition');
    // A bad key of a record (a currency) carries its reason one level down.
    const message = issue?.code === 'invalid_key' ? issue.issues[0]?.message : issue?.message;
    fail(fieldPath(issue?.path ?? []) || '(spec)', message ?? 'is not a saga definition');
  }
  const s = parsed.data!;
  const seen = new Map<string, number>();
  s.steps.forEach((step, i) => {
    const earlier = seen.get(step.id);
    if (earlier !== undefined)
      fail(`steps[${i}].id`, `repeats ${JSON.stringify(step.id)}, the id of steps[${earlier}]`);
    seen.set(step.id, i);
  });
  s.steps.forEach((step, i) => {
    const named = new Set<string>();
    for (const dep of step.dependsOn ?? []) {
      if (dep === step.id) fail(`steps[${i}].dependsOn`, `names the step itself (${JSON.stringify(dep)})`);
      if (!seen.has(dep))
        fail(`steps[${i}].dependsOn`, `names step ${JSON.stringify(dep)}, which the saga does not declare`);
      if (named.has(dep)) fail(`steps[${i}].dependsOn`, `names ${JSON.stringify(dep)} twice`);
      named.add(dep);
    }
  });
  const dependsOn = resolveDependsOn(s.steps);
  const steps: SagaStep[] = s.steps.map((step, i) =>
    Object.freeze({
      id: step.id,
      tool: step.tool,
      dependsOn: Object.freeze(dependsOn[i] ?? []),
      pivot: step.pivot ?? false,
      repeatable: step.repeatable ?? false,
      ...(step.retry ? { retry: Object.freeze(step.retry) } : {}),
    }),
  );
  const cycle = findCycle(steps);
  if (cycle) {
    const at = seen.get(cycle[0] ?? '') ?? 0;
    fail(`steps[${at}].dependsOn`, `is circular: ${cycle.join(' → ')}`);
  }
  const pivots = steps.flatMap((step, i) => (step.pivot ? [i] : []));
  if (pivots.length > 1)
    fail(
      `steps[${pivots[1]}].pivot`,
      `a saga has at most one pivot; steps[${pivots[0]}] (${JSON.stringify(steps[pivots[0]!]!.id)}) is one`,
    );
  return Object.freeze({
    name: s.name,
    version: s.version,
    steps: Object.freeze(steps),
    ...(s.invariant ? { invariant: s.invariant } : {}),
    ...(s.budget ? { budget: deepFreeze(s.budget) } : {}),
    ...(s.policy ? { policy: deepFreeze(s.policy) } : {}),
  });
}

/** The pivot step of a definition, or undefined when it has none. */
export function pivotStepOf(definition: SagaDefinition): SagaStep | undefined {
  return definition.steps.find((s) => s.pivot);
}

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (v && typeof v === 'object') deepFreeze(v as object);
  return Object.freeze(o);
}
