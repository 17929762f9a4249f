import { z } from 'zod';
import { requestJson, type Transport } from './http.js';
import { runPolicySchema, type RunPolicy } from './run-view.js';

/** The ceilings a tenant's floor puts on every new run's budget; `deadlineMs` counts from the run's creation. */
export const floorBudgetSchema = z.looseObject({
  maxSteps: z.number().int().optional(),
  maxAmount: z.record(z.string(), z.number()).optional(),
  deadlineMs: z.number().int().optional(),
  maxAttempts: z.number().int().optional(),
});
export type FloorBudget = z.infer<typeof floorBudgetSchema>;

/** `GET /v1/policy`: the tenant's policy floor, its version and who set it last. */
export const policyFloorViewSchema = z.looseObject({
  policy: runPolicySchema,
  budget: floorBudgetSchema,
  /** 0: never set; then 1, +1 on every change. */
  version: z.number().int(),
  updatedAt: z.string().nullable(),
  updatedBy: z.string().nullable(),
  updatedByTokenId: z.string().nullable(),
});
export type PolicyFloorView = z.infer<typeof policyFloorViewSchema>;

export interface PolicyFloorInput {
  /** Replaces the policy floor whole (`{}` clears it); absent: kept. */
  readonly policy?: RunPolicy;
  /** Replaces the budget ceilings whole (`{}` clears them); absent: kept. */
  readonly budget?: FloorBudget;
  /**
   * The version read: the change applies only if the floor is still at it (0: only if none is set), else a
   * `ConflictError` with code `POLICY_VERSION_MISMATCH`. Absent: last writer wins.
   */
  readonly ifVersion?: number;
}

/**
 * The tenant's policy floor (operator tokens only: an agent token gets `ForbiddenError`, reads included).
 * A new run may tighten the floor, never loosen it: a run asking for less gets the floor.
 */
export interface PolicyMethods {
  getPolicy(): Promise<PolicyFloorView>;
  setPolicy(input: PolicyFloorInput): Promise<PolicyFloorView>;
}

/** The policy methods over one transport; `createSagaClient` spreads them into the client. */
export function createPolicyMethods(transport: Transport): PolicyMethods {
  return {
    async getPolicy() {
      const { data } = await requestJson(transport, {
        method: 'GET',
        path: '/v1/policy',
        ok: [200],
        schema: policyFloorViewSchema,
      });
      return data;
    },
    async setPolicy({ policy, budget, ifVersion }) {
      const { data } = await requestJson(transport, {
        method: 'PUT',
        path: '/v1/policy',
        body: { policy, budget, ifVersion },
        ok: [200],
        schema: policyFloorViewSchema,
      });
      return data;
    },
  };
}
