import type { RunBudget, RunPolicy } from '../db/schema.js';
import { PlanInvalidError, UnknownDefinitionError } from '../errors/errors.js';
import type { SagaDefinition } from './define-saga.js';
import type { FloorApplied } from './policy-floor.js';
import type { MoneyAmounts, RunBudgetInput } from './saga-budget.js';
import type { SagaRegistry } from './saga-registry.js';
import { planHash, validatePlan, type PlanEntry, type ProposedPlanEntry } from './validate-plan.js';

/** What `POST /v1/runs` may say about a run besides its id and metadata (each already parsed by schema). */
export interface RunBindingRequest {
  readonly definition?: { readonly name: string; readonly version?: number | undefined } | undefined;
  readonly goal?: string | undefined;
  readonly actor?: string | undefined;
  readonly plan?: readonly ProposedPlanEntry[] | undefined;
  readonly budget?: RunBudgetInput | undefined;
  readonly policy?: RunPolicy | undefined;
}

/** A run's binding, checked, as `createRun` stores it in the columns of migration 0013. */
export interface RunBinding {
  readonly definition: { readonly name: string; readonly version: number } | null;
  readonly goal: string | null;
  readonly actor: string | null;
  readonly plan: readonly PlanEntry[] | null;
  readonly planHash: string | null;
  /** The run's budget with the definition's defaults under it; `deadline` only when the run named one. */
  readonly budget: RunBudget;
  /** The definition's `deadlineMs`, when the run named no deadline: `createRun` adds it to the creation time. */
  readonly deadlineMs: number | null;
  readonly policy: RunPolicy;
  /**
   * The run has a rule only the intake transaction applies: a definition, a plan, any budget field or
   * `approveMoneyAbove`. Such a run's calls never take the grouped intake statement (`recordNewIntents`).
   * `requirePivot`, `unwindOnFailure`, `approveDeletions` and `authorityTtlMs` alone do not make a run
   * governed: the grouped statement never decides what they govern (held calls take the transaction anyway,
   * and the rest is recovery's).
   */
  readonly governed: boolean;
  /** What the tenant's policy floor decided (`bindRunUnderFloor`); absent when the tenant has none. */
  readonly floor?: FloorApplied;
}

/** The binding of a run created without any of these fields: exactly today's unbound run. */
export const UNBOUND_RUN: RunBinding = Object.freeze({
  definition: null,
  goal: null,
  actor: null,
  plan: null,
  planHash: null,
  budget: Object.freeze({}),
  deadlineMs: null,
  policy: Object.freeze({}),
  governed: false,
});

/**
 * Resolves what a new run is bound to, refusing before anything is written:
 * - `definition`: a name (and version; the highest registered by default) the tool module declares, else
 *   400 UNKNOWN_DEFINITION naming `definition.name` or `definition.version`;
 * - `budget` and `policy`: the definition's defaults with the run's own fields on top, field by field (a
 *   run's `maxAmount` or `approveMoneyAbove` replaces the definition's whole map, so what the run says is
 *   exactly what applies to each field it names). Currency codes are lower-cased, as `moves` is compared;
 * - `plan`: only on a bound run, checked by {@link validatePlan} (400 PLAN_INVALID naming the entry), then
 *   stored with its hash.
 */
export function bindRun(definitions: SagaRegistry | undefined, req: RunBindingRequest): RunBinding {
  const definition = req.definition ? resolveDefinition(definitions, req.definition) : undefined;
  if (req.plan && !definition)
    throw new PlanInvalidError('plan', 'a plan is checked against a definition: name one (definition.name)');
  const plan = definition && req.plan ? validatePlan(definition, definitions!.tools, req.plan) : null;
  const defaults = definition?.budget ?? {};
  const own = req.budget ?? {};
  const maxAmount = own.maxAmount ?? defaults.maxAmount;
  const budget: RunBudget = {
    ...pick('maxSteps', own.maxSteps ?? defaults.maxSteps),
    ...(maxAmount ? { maxAmount: lowerCurrencies(maxAmount) } : {}),
    ...pick('deadline', own.deadline === undefined ? undefined : new Date(own.deadline).toISOString()),
    ...pick('maxAttempts', own.maxAttempts ?? defaults.maxAttempts),
  };
  const merged: RunPolicy = { ...definition?.policy, ...req.policy };
  const policy: RunPolicy = merged.approveMoneyAbove
    ? { ...merged, approveMoneyAbove: lowerCurrencies(merged.approveMoneyAbove) }
    : merged;
  const deadlineMs = own.deadline === undefined ? (defaults.deadlineMs ?? null) : null;
  return {
    definition: definition ? { name: definition.name, version: definition.version } : null,
    goal: req.goal ?? null,
    actor: req.actor ?? null,
    plan,
    planHash: plan ? planHash(plan) : null,
    budget,
    deadlineMs,
    policy,
    governed: isGoverned({ definition, budget, deadlineMs, policy }),
  };
}

/**
 * Whether a run is governed (see {@link RunBinding.governed}): a definition, any budget field (a deadline
 * to come included) or `approveMoneyAbove`. One home: `bindRun` and `applyPolicyFloor` (a floor's money
 * limit or budget makes a run governed) both ask it.
 */
export function isGoverned(
  b: Pick<RunBinding, 'budget' | 'deadlineMs' | 'policy'> & { readonly definition: unknown },
): boolean {
  return (
    (b.definition !== undefined && b.definition !== null) ||
    Object.keys(b.budget).length > 0 ||
    b.deadlineMs !== null ||
    b.policy.approveMoneyAbove !== undefined
  );
}

function resolveDefinition(
  definitions: SagaRegistry | undefined,
  ref: NonNullable<RunBindingRequest['definition']>,
): SagaDefinition {
  const versions = definitions?.versions(ref.name) ?? [];
  if (versions.length === 0)
    throw new UnknownDefinitionError(
      'definition.name',
      `no saga definition ${JSON.stringify(ref.name)} is registered` +
        (definitions?.list().length
          ? ` (known: ${[...new Set(definitions.list().map((d) => d.name))].join(', ')})`
          : ''),
    );
  const found = definitions!.get(ref.name, ref.version);
  if (!found)
    throw new UnknownDefinitionError(
      'definition.version',
      `${ref.name} has no version ${String(ref.version)} (registered: ${versions.join(', ')})`,
    );
  return found;
}

/** `{ USD: 1 }` → `{ usd: 1 }` (the schema refused two spellings of one currency already). */
export function lowerCurrencies(amounts: MoneyAmounts): MoneyAmounts {
  return Object.fromEntries(Object.entries(amounts).map(([c, amount]) => [c.toLowerCase(), amount]));
}

function pick<K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } {
  return value === undefined ? {} : ({ [key]: value } as { [k in K]: V });
}
