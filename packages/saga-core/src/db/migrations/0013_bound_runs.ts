import { sql, type Kysely } from 'kysely';

/**
 * Runs bound to a saga definition, with a plan, a budget and an authority that expires (issue 12).
 *
 * - `definition_name`, `definition_version`: the definition the run is bound to; both null for an unbound
 *   run (it works as before). A definition lives in code, so they are plain values, not a foreign key.
 * - `goal`, `actor`: what the run is for and who asked, as given at creation.
 * - `plan`, `plan_hash`: the validated plan (`[{ step, args }]`) and the sha256 of its canonical JSON.
 * - `budget`: the run's budget, the definition's defaults merged with the run's own (`{}`: none);
 *   `deadline_at` its deadline as an absolute time, so a sweep finds overdue runs by index.
 * - `governed`: the run has a rule only the intake transaction applies (a definition, a plan, a budget, a
 *   money policy). The grouped intake statement leaves such a run's calls to the intake transaction.
 * - `authority_at`: when the run's authority was last granted (its creation, then each approval); with
 *   `policy.authorityTtlMs`, recovery after `authority_at + ttl` waits for a renewal.
 * - `saga_log.step_id`: the definition step a call was matched to (null on an unbound run).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE runs
      ADD COLUMN definition_name    text,
      ADD COLUMN definition_version integer,
      ADD COLUMN goal               text,
      ADD COLUMN actor              text,
      ADD COLUMN plan               jsonb,
      ADD COLUMN plan_hash          text,
      ADD COLUMN budget             jsonb NOT NULL DEFAULT '{}'::jsonb,
      ADD COLUMN deadline_at        timestamptz,
      ADD COLUMN governed           boolean NOT NULL DEFAULT false,
      ADD COLUMN authority_at       timestamptz NOT NULL DEFAULT now(),
      ADD CONSTRAINT runs_definition_whole CHECK ((definition_name IS NULL) = (definition_version IS NULL)),
      ADD CONSTRAINT runs_plan_hashed CHECK ((plan IS NULL) = (plan_hash IS NULL))`.execute(db);
  await sql`CREATE INDEX runs_deadline ON runs (deadline_at) WHERE deadline_at IS NOT NULL AND status IN ('RUNNING', 'AWAITING_APPROVAL')`.execute(
    db,
  );
  await sql`ALTER TABLE saga_log ADD COLUMN step_id text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE saga_log DROP COLUMN step_id`.execute(db);
  await sql`DROP INDEX runs_deadline`.execute(db);
  await sql`
    ALTER TABLE runs
      DROP CONSTRAINT runs_plan_hashed,
      DROP CONSTRAINT runs_definition_whole,
      DROP COLUMN authority_at,
      DROP COLUMN governed,
      DROP COLUMN deadline_at,
      DROP COLUMN budget,
      DROP COLUMN plan_hash,
      DROP COLUMN plan,
      DROP COLUMN actor,
      DROP COLUMN goal,
      DROP COLUMN definition_version,
      DROP COLUMN definition_name`.execute(db);
}
