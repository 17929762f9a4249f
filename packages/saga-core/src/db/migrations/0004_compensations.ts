import { sql, type Kysely } from 'kysely';

/**
 * The compensator's tables.
 *
 * - `compensations`: one row per step of an unwound run, keyed like the step `(run_id, step_idx)`. It is
 *   the intent log of the compensation: its own key (`compensate:<forward tool>`, UNIQUE), a lease and an
 *   attempt count written BEFORE each call, the outcome after. `saga_log.compensation_status` mirrors
 *   `status` (written by the same transaction) so the step view and its readers need no join.
 *   The partial index serves the driver's "what is still to do" read without touching settled rows.
 * - `corrections`: messages to people queued after every automatic compensation, only when the customer
 *   could have seen the original effect. Never sent by the harness.
 * - `cases`: manual-intervention items, with the evidence a person needs.
 * - `step_events.kind` gains `compensation` (its CHECK is replaced).
 *
 * Frozen (issue 11): the status lists are spelled out as this file created them on a fresh database when it
 * was frozen; it used to derive them from the status objects. The `step_events.kind` list is the one 0005
 * writes again (when first committed this file wrote five kinds; 0005 replaces the constraint anyway).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE compensations (
      run_id          text NOT NULL,
      step_idx        integer NOT NULL,
      tenant_id       text NOT NULL,
      tool            text,
      idempotency_key text UNIQUE,
      args            jsonb,
      status          text NOT NULL
                      CHECK (status IN ('pending', 'running', 'compensated', 'unknown', 'failed', 'skipped')),
      reason          text,
      attempts        integer NOT NULL DEFAULT 0,
      lease_until     timestamptz,
      lease_owner     text,
      last_attempt_at timestamptz,
      next_attempt_at timestamptz,
      external_ref    text,
      result          jsonb,
      error           jsonb,
      created_at      timestamptz NOT NULL DEFAULT now(),
      updated_at      timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (run_id, step_idx),
      FOREIGN KEY (run_id, step_idx) REFERENCES saga_log (run_id, step_idx)
    )`.execute(db);
  await sql`CREATE INDEX compensations_open ON compensations (run_id) WHERE status IN ('pending', 'running', 'unknown', 'failed')`.execute(
    db,
  );

  await sql`
    CREATE TABLE corrections (
      run_id     text NOT NULL,
      step_idx   integer NOT NULL,
      tenant_id  text NOT NULL,
      command    jsonb NOT NULL,
      audience   text[] NOT NULL,
      status     text NOT NULL CHECK (status IN ('open', 'resolved')),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (run_id, step_idx),
      FOREIGN KEY (run_id, step_idx) REFERENCES saga_log (run_id, step_idx)
    )`.execute(db);

  await sql`
    CREATE TABLE cases (
      id         bigserial PRIMARY KEY,
      run_id     text NOT NULL REFERENCES runs (run_id),
      step_idx   integer,
      tenant_id  text NOT NULL,
      reason     text NOT NULL,
      evidence   jsonb NOT NULL DEFAULT '{}'::jsonb,
      status     text NOT NULL CHECK (status IN ('open', 'resolved')),
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  // One open case per step (or per run, step_idx null), so a compensator that resumes does not open twice.
  await sql`CREATE UNIQUE INDEX cases_one_per_step ON cases (run_id, coalesce(step_idx, -1))`.execute(db);

  await sql`ALTER TABLE step_events DROP CONSTRAINT step_events_kind_check`.execute(db);
  await sql`
    ALTER TABLE step_events ADD CONSTRAINT step_events_kind_check
      CHECK (kind IN ('transition', 'attempt', 'retry_call', 'lookup', 'compensation', 'run_transition', 'decision'))`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['cases', 'corrections', 'compensations'])
    await sql`DROP TABLE ${sql.table(t)}`.execute(db);
}
