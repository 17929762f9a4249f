import { sql, type Kysely } from 'kysely';

/**
 * Columns of the reconciler (services/reconciler), all on `saga_log` so a claim is one row lock:
 *
 * - `reconcile_lease_until`, `reconcile_lease_owner`: a reconciler's claim on an unsettled step while it
 *   looks the effect up. Separate from the executor's `lease_*` columns: an expired executor lease is what
 *   makes an INTENDED step reconcilable, so the two must not share a column.
 * - `reconcile_attempts`: lookups of this step that failed (threw or timed out) since it last moved
 *   forward; past the retry budget the step goes to MANUAL_INTERVENTION.
 * - `next_reconcile_at`: not before this time (backoff with jitter after a failed lookup, or the moment
 *   the tool's `lookupLagMs` has passed after a "not found"); null means due now.
 *
 * No new index: a sweep filters on `status IN ('INTENDED', 'UNKNOWN')`, which is exactly the predicate of
 * the partial index `saga_log_unsettled` (0001), so its cost follows the unsettled rows, not the log. A
 * second partial index would add an index write to every intent and claim on the hot path for no gain.
 *
 * `ADD COLUMN` with a constant default only touches the catalog (Postgres ≥ 11): no table rewrite.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE saga_log
      ADD COLUMN reconcile_lease_until timestamptz,
      ADD COLUMN reconcile_lease_owner text,
      ADD COLUMN reconcile_attempts    integer NOT NULL DEFAULT 0 CHECK (reconcile_attempts >= 0),
      ADD COLUMN next_reconcile_at     timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE saga_log
      DROP COLUMN next_reconcile_at,
      DROP COLUMN reconcile_attempts,
      DROP COLUMN reconcile_lease_owner,
      DROP COLUMN reconcile_lease_until`.execute(db);
}
