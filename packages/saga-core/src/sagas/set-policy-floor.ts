import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import type { RunPolicy, TenantPolicyRow } from '../db/schema.js';
import { PolicyVersionMismatchError } from '../errors/errors.js';
import { lowerCurrencies } from './bind-run.js';
import type { TenantPolicyFloor } from './policy-floor.js';
import { readPolicyFloor } from './read-policy-floor.js';
import type { SagaBudget } from './saga-budget.js';

/** A change of a tenant's floor, already parsed (`policyFloorSchema`), and who makes it. */
export interface PolicyFloorChange {
  readonly tenantId: string;
  /** Replaces the stored policy floor whole; absent: the stored one is kept. */
  readonly policy?: RunPolicy | undefined;
  /** Replaces the stored budget ceilings whole; absent: the stored ones are kept. */
  readonly budget?: SagaBudget | undefined;
  /**
   * The version the operator read (`GET /v1/policy`): the change applies only if the floor is still at it
   * (0: only if the tenant has no floor yet), else {@link PolicyVersionMismatchError}. Absent: last writer
   * wins.
   */
  readonly ifVersion?: number | undefined;
  /** The operator token's label and id, recorded as `updated_by` and `updated_by_token`. */
  readonly actor: string;
  readonly tokenId: string | null;
}

/**
 * Sets a tenant's policy floor, a compare-and-set on `version` (the first set makes version 1, every change
 * +1). Each part named replaces the stored part whole (`{ policy: {} }` clears the policy floor); a part
 * not named is kept. Currency codes are stored lower-cased, as runs compare them. Applies to runs created
 * from then on; a run already created keeps the policy it was created with.
 *
 * ```sql
 * -- ifVersion absent: upsert
 * INSERT INTO tenant_policies (tenant_id, policy, budget, version, updated_by, updated_by_token)
 * VALUES ($tenant, coalesce($policy, '{}'), coalesce($budget, '{}'), 1, $by, $token)
 * ON CONFLICT (tenant_id) DO UPDATE SET policy = coalesce($policy, p.policy), …, version = p.version + 1
 * RETURNING *;
 * -- ifVersion 0: the same INSERT … ON CONFLICT DO NOTHING
 * -- ifVersion n: UPDATE tenant_policies SET … WHERE tenant_id = $tenant AND version = $n RETURNING *;
 * ```
 * Zero rows is the mismatch: the current version is read and named in the error; nothing was changed.
 */
export async function setPolicyFloor(db: SagaDb, change: PolicyFloorChange): Promise<TenantPolicyFloor> {
  const policy = change.policy === undefined ? null : JSON.stringify(normalisePolicy(change.policy));
  const budget = change.budget === undefined ? null : JSON.stringify(normaliseBudget(change.budget));
  const by = change.actor;
  const token = change.tokenId;
  const insert = sql`
    INSERT INTO tenant_policies AS p (tenant_id, policy, budget, version, updated_by, updated_by_token)
    VALUES (${change.tenantId}, coalesce(${policy}::jsonb, '{}'::jsonb), coalesce(${budget}::jsonb, '{}'::jsonb),
            1, ${by}, ${token})`;
  const set = sql`
    policy = coalesce(${policy}::jsonb, p.policy), budget = coalesce(${budget}::jsonb, p.budget),
    version = p.version + 1, updated_at = now(), updated_by = ${by}, updated_by_token = ${token}`;
  const query =
    change.ifVersion === undefined
      ? sql<TenantPolicyRow>`${insert} ON CONFLICT (tenant_id) DO UPDATE SET ${set} RETURNING *`
      : change.ifVersion === 0
        ? sql<TenantPolicyRow>`${insert} ON CONFLICT (tenant_id) DO NOTHING RETURNING *`
        : sql<TenantPolicyRow>`
            UPDATE tenant_policies AS p SET ${set}
             WHERE p.tenant_id = ${change.tenantId} AND p.version = ${change.ifVersion}
            RETURNING *`;
  const row = (await query.execute(db)).rows[0];
  if (!row) {
    const { floor } = await readPolicyFloor(db, change.tenantId);
    throw new PolicyVersionMismatchError(change.ifVersion ?? 0, floor.version);
  }
  return {
    tenantId: row.tenant_id,
    policy: row.policy,
    budget: row.budget,
    version: row.version,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
    updatedByToken: row.updated_by_token,
  };
}

function normalisePolicy(p: RunPolicy): RunPolicy {
  return p.approveMoneyAbove ? { ...p, approveMoneyAbove: lowerCurrencies(p.approveMoneyAbove) } : p;
}

function normaliseBudget(b: SagaBudget): SagaBudget {
  return b.maxAmount ? { ...b, maxAmount: lowerCurrencies(b.maxAmount) } : b;
}
