import type { RunBudget, RunPolicy } from '../db/schema.js';
import { isGoverned, lowerCurrencies, type RunBinding } from './bind-run.js';
import type { PolicyFloor } from './policy-floor.js';
import type { MoneyAmounts } from './saga-budget.js';

/** A run's binding with its tenant's floor applied, and the fields the floor decided (dotted paths). */
export interface FlooredBinding {
  readonly binding: RunBinding;
  readonly fields: readonly string[];
}

/**
 * The policy fields that constrain when true: a floor's `true` wins over a run's `false` or silence.
 * `unwindOnFailure` is among them: unwinding by itself on a definitive failure before the pivot is a
 * safety behaviour (no half-done run left waiting for someone to notice), so an operator may require it,
 * and a run may not opt out. A floor's `false` requires nothing: a floor never forbids a safety behaviour.
 */
const REQUIRED_WHEN_TRUE = ['requirePivot', 'unwindOnFailure', 'approveDeletions'] as const;

/**
 * The one home of the rule "floor ∧ run": the stricter of the two, field by field, so a run asking for
 * less than its tenant's floor is not refused but gets the floor (and the run view shows what applies):
 * - `requirePivot`, `unwindOnFailure`, `approveDeletions`: OR (see {@link REQUIRED_WHEN_TRUE});
 * - `approveMoneyAbove`: the lower limit per currency; a currency only the floor names takes the floor's
 *   (a currency a run does not name is not held, so the floor's limit is the stricter);
 * - `authorityTtlMs`: the shorter;
 * - budget `maxSteps`, `maxAttempts`: the lower; `maxAmount`: the lower per currency, a currency only the
 *   floor names taking the floor's (a currency a budget does not name is not limited);
 * - budget deadline: the earlier of the run's own (its absolute `deadline`, or the definition's
 *   `deadlineMs`) and the floor's `deadlineMs` from `now`. Only a run with an absolute deadline needs
 *   `now` (the database's clock, read just before the run's insert: the floor's deadline then falls a few
 *   milliseconds before `created_at + deadlineMs`, on the strict side); otherwise the floor's `deadlineMs`
 *   is left to `createRun`, which adds it to the creation time as it does a definition's.
 *
 * Pure: the caller reads the floor and the clock (`bindRunUnderFloor`). `governed` is recomputed, since a
 * floor's `approveMoneyAbove` or budget makes a run governed.
 */
export function applyPolicyFloor(binding: RunBinding, floor: PolicyFloor, now: Date): FlooredBinding {
  const fields: string[] = [];
  const policy = floorPolicy(binding.policy, floor.policy, fields);
  const { budget, deadlineMs } = floorBudget(binding, floor, now, fields);
  if (fields.length === 0) return { binding, fields };
  const floored = { ...binding, policy, budget, deadlineMs };
  return { binding: { ...floored, governed: isGoverned(floored) }, fields };
}

function floorPolicy(run: RunPolicy, floor: RunPolicy, fields: string[]): RunPolicy {
  const out: { -readonly [K in keyof RunPolicy]: RunPolicy[K] } = { ...run };
  for (const key of REQUIRED_WHEN_TRUE)
    if (floor[key] === true && run[key] !== true) {
      out[key] = true;
      fields.push(`policy.${key}`);
    }
  const money = lowerOf(run.approveMoneyAbove, floor.approveMoneyAbove, 'policy.approveMoneyAbove', fields);
  if (money) out.approveMoneyAbove = money;
  const ttl = lowerOne(run.authorityTtlMs, floor.authorityTtlMs, 'policy.authorityTtlMs', fields);
  if (ttl !== undefined) out.authorityTtlMs = ttl;
  return out;
}

function floorBudget(
  binding: RunBinding,
  floor: PolicyFloor,
  now: Date,
  fields: string[],
): { budget: RunBudget; deadlineMs: number | null } {
  const run = binding.budget;
  const out: { -readonly [K in keyof RunBudget]: RunBudget[K] } = { ...run };
  const steps = lowerOne(run.maxSteps, floor.budget.maxSteps, 'budget.maxSteps', fields);
  if (steps !== undefined) out.maxSteps = steps;
  const amount = lowerOf(run.maxAmount, floor.budget.maxAmount, 'budget.maxAmount', fields);
  if (amount) out.maxAmount = amount;
  const attempts = lowerOne(run.maxAttempts, floor.budget.maxAttempts, 'budget.maxAttempts', fields);
  if (attempts !== undefined) out.maxAttempts = attempts;

  const floorMs = floor.budget.deadlineMs;
  let deadlineMs = binding.deadlineMs;
  if (floorMs !== undefined) {
    if (run.deadline !== undefined) {
      const byFloor = now.getTime() + floorMs;
      if (byFloor < new Date(run.deadline).getTime()) {
        out.deadline = new Date(byFloor).toISOString();
        fields.push('budget.deadline');
      }
    } else if (deadlineMs === null || floorMs < deadlineMs) {
      deadlineMs = floorMs;
      fields.push('budget.deadline');
    }
  }
  return { budget: out, deadlineMs };
}

/** The lower of a run's value and a floor's; the field is noted when the floor's is the one that applies. */
function lowerOne(
  run: number | undefined,
  floor: number | undefined,
  field: string,
  fields: string[],
): number | undefined {
  if (floor === undefined || (run !== undefined && run <= floor)) return run;
  fields.push(field);
  return floor;
}

/** Per currency, the lower limit; a currency only the floor names takes the floor's. */
function lowerOf(
  run: MoneyAmounts | undefined,
  floor: MoneyAmounts | undefined,
  field: string,
  fields: string[],
): MoneyAmounts | undefined {
  if (!floor || Object.keys(floor).length === 0) return run;
  const out: Record<string, number> = { ...run };
  for (const [currency, limit] of Object.entries(lowerCurrencies(floor))) {
    const own = out[currency];
    if (own !== undefined && own <= limit) continue;
    out[currency] = limit;
    fields.push(`${field}.${currency}`);
  }
  return out;
}
