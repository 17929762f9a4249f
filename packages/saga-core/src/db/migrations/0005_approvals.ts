import { sql, type Kysely } from 'kysely';

/**
 * Approvals, the pivot, and the operator's decisions.
 *
 * - `approvals`: one human decision. `hash` binds it to the exact canonical arguments (and keys) of the
 *   steps it covers (`saga_log.approval_id` points back); a decision must carry that hash. Single use: only
 *   `pending` is open, and every decision is a compare-and-set from `pending`. At most one pending pivot per
 *   run (a new pivot supersedes the old one in the same transaction). `approvals_pending` serves the inbox
 *   and the expiry sweep without touching decided rows.
 * - `runs.policy`: the run's policy (`requirePivot`, `unwindOnFailure`), fixed at creation.
 * - `runs.pivot_idx`: the first commit step of the run's approved or pending pivot; steps from there on
 *   only roll forward. `runs.irreversible_before_pivot` counts irreversible steps released before any pivot.
 * - `outbox.relay_after`: the relays publish a row from this time on. A row the API publishes itself (its
 *   fast path) is left to it for the grace (`RELAY_GRACE_MS`); every other row (a released commit step, a
 *   re-dispatch by the reconciler or an operator) is the relays' at once, not after the API's grace.
 * - `step_events`: run-level events have no step (`step_idx` null); `actor` names who decided.
 * - `corrections`: an id for the operator's routes, the key it is sent with, its ref, and who decided;
 *   statuses become `CorrectionStatus`. A send carries the hash of the command the person saw
 *   (`correctionHash`, computed, not stored: an edit of the command changes it).
 * - `cases`: who resolved a case, when and how; one OPEN case per step (a resolved one no longer blocks).
 *
 * Frozen (issue 11): the status lists are spelled out as this file created them on a fresh database when it
 * was frozen; it used to derive them from the status objects. Its `corrections.status` list is the one 0006
 * writes again (this file first wrote `open`, `sent`, `dismissed`; 0006 replaces the constraint anyway).
 * `outbox.relay_after` was added to this file after it had been committed: a database migrated by the first
 * version lacks it, which 0011 repairs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE approvals (
      id          text PRIMARY KEY,
      tenant_id   text NOT NULL,
      run_id      text NOT NULL REFERENCES runs (run_id),
      kind        text NOT NULL CHECK (kind IN ('pivot', 'step')),
      status      text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'superseded')),
      hash        text NOT NULL,
      steps       integer[] NOT NULL,
      summary     text,
      evidence    jsonb NOT NULL DEFAULT '{}'::jsonb,
      expires_at  timestamptz NOT NULL,
      decided_by  text,
      decided_at  timestamptz,
      comment     text,
      created_at  timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX approvals_pending ON approvals (tenant_id, expires_at) WHERE status = 'pending'`.execute(
    db,
  );
  await sql`CREATE INDEX approvals_run ON approvals (run_id, created_at)`.execute(db);
  await sql`CREATE UNIQUE INDEX approvals_one_pending_pivot ON approvals (run_id) WHERE status = 'pending' AND kind = 'pivot'`.execute(
    db,
  );

  await sql`ALTER TABLE saga_log ADD COLUMN approval_id text REFERENCES approvals (id)`.execute(db);
  // now() is stable, not volatile: the default is stored once in the catalog, no table rewrite.
  await sql`ALTER TABLE outbox ADD COLUMN relay_after timestamptz NOT NULL DEFAULT now()`.execute(db);
  await sql`
    ALTER TABLE runs
      ADD COLUMN policy                    jsonb NOT NULL DEFAULT '{}'::jsonb,
      ADD COLUMN pivot_idx                 integer,
      ADD COLUMN irreversible_before_pivot integer NOT NULL DEFAULT 0`.execute(db);

  await sql`ALTER TABLE step_events ALTER COLUMN step_idx DROP NOT NULL, ADD COLUMN actor text`.execute(db);
  await sql`ALTER TABLE step_events DROP CONSTRAINT step_events_kind_check`.execute(db);
  await sql`
    ALTER TABLE step_events ADD CONSTRAINT step_events_kind_check
      CHECK (kind IN ('transition', 'attempt', 'retry_call', 'lookup', 'compensation', 'run_transition', 'decision'))`.execute(
    db,
  );

  await sql`ALTER TABLE corrections DROP CONSTRAINT corrections_status_check`.execute(db);
  await sql`UPDATE corrections SET status = 'dismissed' WHERE status = 'resolved'`.execute(db);
  await sql`
    ALTER TABLE corrections
      ADD COLUMN id              bigserial UNIQUE,
      ADD COLUMN idempotency_key text,
      ADD COLUMN external_ref    text,
      ADD COLUMN decided_by      text,
      ADD COLUMN decided_at      timestamptz,
      ADD COLUMN comment         text,
      ADD CONSTRAINT corrections_status_check
        CHECK (status IN ('open', 'sending', 'unknown', 'sent', 'dismissed'))`.execute(db);

  await sql`
    ALTER TABLE cases
      ADD COLUMN resolved_by text,
      ADD COLUMN resolved_at timestamptz,
      ADD COLUMN resolution  jsonb`.execute(db);
  // One OPEN case per step (or per run): a resolved case no longer blocks a new one for the same step.
  await sql`DROP INDEX cases_one_per_step`.execute(db);
  await sql`CREATE UNIQUE INDEX cases_one_open_per_step ON cases (run_id, coalesce(step_idx, -1)) WHERE status = 'open'`.execute(
    db,
  );
  await sql`CREATE INDEX cases_open ON cases (tenant_id, created_at) WHERE status = 'open'`.execute(db);
  await sql`CREATE INDEX corrections_open ON corrections (tenant_id, created_at) WHERE status = 'open'`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX corrections_open`.execute(db);
  await sql`DROP INDEX cases_open`.execute(db);
  await sql`DROP INDEX cases_one_open_per_step`.execute(db);
  await sql`CREATE UNIQUE INDEX cases_one_per_step ON cases (run_id, coalesce(step_idx, -1))`.execute(db);
  await sql`ALTER TABLE cases DROP COLUMN resolution, DROP COLUMN resolved_at, DROP COLUMN resolved_by`.execute(
    db,
  );
  await sql`ALTER TABLE corrections DROP CONSTRAINT corrections_status_check`.execute(db);
  await sql`
    ALTER TABLE corrections DROP COLUMN comment, DROP COLUMN decided_at, DROP COLUMN decided_by,
      DROP COLUMN external_ref, DROP COLUMN idempotency_key, DROP COLUMN id`.execute(db);
  await sql`ALTER TABLE step_events DROP COLUMN actor`.execute(db);
  await sql`ALTER TABLE runs DROP COLUMN irreversible_before_pivot, DROP COLUMN pivot_idx, DROP COLUMN policy`.execute(
    db,
  );
  await sql`ALTER TABLE outbox DROP COLUMN relay_after`.execute(db);
  await sql`ALTER TABLE saga_log DROP COLUMN approval_id`.execute(db);
  await sql`DROP TABLE approvals`.execute(db);
}
