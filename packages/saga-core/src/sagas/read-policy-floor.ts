import { sql } from 'kysely';
import type { SagaDb, SagaTrx } from '../db/connect.js';
import type { RunPolicy } from '../db/schema.js';
import type { TenantPolicyFloor } from './policy-floor.js';
import type { SagaBudget } from './saga-budget.js';

/** A tenant's floor and the database's clock, read together. */
export interface PolicyFloorReading {
  readonly floor: TenantPolicyFloor;
  /** `now()` of the read: what a floor's `deadlineMs` counts from for a run with an absolute deadline. */
  readonly now: Date;
}

/**
 * Reads a tenant's policy floor (migration 0018) with the database's clock, in one round trip: the LEFT
 * JOIN from a one-row relation answers a row (with `now`) whether or not the tenant has a floor. A tenant
 * without one has version 0 and an empty floor. Only the tenant's own row is ever read.
 *
 * ```sql
 * SELECT now() AS now, p.policy, p.budget, p.version, p.updated_at, p.updated_by, p.updated_by_token
 *   FROM (SELECT 1) AS one LEFT JOIN tenant_policies p ON p.tenant_id = $tenant;
 * ```
 */
export async function readPolicyFloor(db: SagaDb | SagaTrx, tenantId: string): Promise<PolicyFloorReading> {
  const r = await sql<{
    now: Date;
    policy: RunPolicy | null;
    budget: SagaBudget | null;
    version: number | null;
    updated_at: Date | null;
    updated_by: string | null;
    updated_by_token: string | null;
  }>`
    SELECT now() AS now, p.policy, p.budget, p.version, p.updated_at, p.updated_by, p.updated_by_token
      FROM (SELECT 1) AS one LEFT JOIN tenant_policies p ON p.tenant_id = ${tenantId}`.execute(db);
  const row = r.rows[0]!;
  return {
    now: row.now,
    floor: {
      tenantId,
      policy: row.policy ?? {},
      budget: row.budget ?? {},
      version: row.version ?? 0,
      updatedAt: row.updated_at,
      updatedBy: row.updated_by,
      updatedByToken: row.updated_by_token,
    },
  };
}
