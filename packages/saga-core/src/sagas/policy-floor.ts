import { z } from 'zod';
import type { RunPolicy } from '../db/schema.js';
import { sagaBudgetSchema, type SagaBudget } from './saga-budget.js';
import { sagaPolicySchema } from './saga-policy.js';

/**
 * A tenant's policy floor: what an operator sets (`PUT /v1/policy`, `agent-saga policy set`) for every run
 * the tenant creates from then on, under the definition's defaults and the run's own fields, which the
 * agent being constrained chooses. A run may tighten the floor and never loosen it (`applyPolicyFloor`
 * says field by field what "tighter" means).
 *
 * - `policy`: the shape of a run's policy (`sagaPolicySchema`), each field a minimum;
 * - `budget`: the shape of a definition's budget (`sagaBudgetSchema`: `deadlineMs` counts from each run's
 *   creation), each field a ceiling.
 *
 * A field the floor does not name leaves the run's value alone; `false` for a boolean is the same as not
 * naming it (a floor can only require, never forbid).
 */
export interface PolicyFloor {
  readonly policy: RunPolicy;
  readonly budget: SagaBudget;
}

/** No floor: what a tenant without a `tenant_policies` row has. */
export const NO_POLICY_FLOOR: PolicyFloor = Object.freeze({
  policy: Object.freeze({}),
  budget: Object.freeze({}),
});

/**
 * A floor as an operator writes it (the API's body, the CLI's `--file`): either part may be left out. An
 * unknown field is refused, named (`policy.requirePivott`), as the run's own policy is.
 */
export const policyFloorSchema = z
  .object({
    policy: sagaPolicySchema
      .optional()
      .describe("The floor of every new run's policy: a run may tighten it, never loosen it"),
    budget: sagaBudgetSchema
      .optional()
      .describe("Ceilings of every new run's budget (`deadlineMs` from the run's creation)"),
  })
  .strict();
export type PolicyFloorInput = z.infer<typeof policyFloorSchema>;

/** A tenant's floor as stored, with who set it last; version 0 and nulls when it has none. */
export interface TenantPolicyFloor extends PolicyFloor {
  readonly tenantId: string;
  /** 0: never set; then 1, +1 on every change. */
  readonly version: number;
  readonly updatedAt: Date | null;
  readonly updatedBy: string | null;
  readonly updatedByToken: string | null;
}

/**
 * Which fields of a run the floor decided, and the floor's version: kept on the run's creation event, so
 * the run's journal says why its policy is stricter than what the agent asked for.
 */
export interface FloorApplied {
  readonly version: number;
  /** Dotted paths: `policy.requirePivot`, `policy.approveMoneyAbove.usd`, `budget.deadline`. */
  readonly fields: readonly string[];
}
