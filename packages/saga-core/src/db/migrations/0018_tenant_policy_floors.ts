import { sql, type Kysely } from 'kysely';

/**
 * Per-tenant policy floors (issue 14, least privilege): what an operator sets for every run of a tenant,
 * which a run may tighten and never loosen (core's `applyPolicyFloor`).
 *
 * - `tenant_policies`: one row per tenant that has a floor; no row is no floor (every run as before).
 * - `policy`: the floor of a run's policy (`requirePivot`, `unwindOnFailure`, `approveMoneyAbove`,
 *   `approveDeletions`, `authorityTtlMs`); `budget`: the ceilings of a run's budget (`maxSteps`,
 *   `maxAmount`, `deadlineMs`, `maxAttempts`). Both JSON objects, `{}` when the floor says nothing there.
 * - `version`: 1 when first set, +1 on every change; a change may name the version it read
 *   (compare-and-set), so two operators never overwrite each other unseen.
 * - `updated_by`, `updated_by_token`: the label and the token id of the operator who last set it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE tenant_policies (
      tenant_id        text PRIMARY KEY,
      policy           jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(policy) = 'object'),
      budget           jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(budget) = 'object'),
      version          integer NOT NULL CHECK (version >= 1),
      updated_at       timestamptz NOT NULL DEFAULT now(),
      updated_by       text,
      updated_by_token text
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE tenant_policies`.execute(db);
}
