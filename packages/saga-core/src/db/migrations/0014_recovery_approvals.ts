import { sql, type Kysely } from 'kysely';

/**
 * Approvals in recovery (issue 12): a compensation held for a person, and a run's authority renewed.
 *
 * - `approvals.kind` gains `compensation` (one compensation held before its send: it moves money above the
 *   run policy's `approveMoneyAbove`, or deletes under `approveDeletions`) and `renewal` (the run's
 *   authority lapsed, `policy.authorityTtlMs`: recovery waits for a person to renew it).
 * - `compensations.status` and its mirror `saga_log.compensation_status` gain `awaiting_approval`.
 * - `compensations.approval_id`: the approval that held the compensation; set with the hold and kept, so a
 *   pass after the approval knows the send was approved, and against which hash.
 * - `approvals_one_pending_renewal`: at most one pending renewal per run, however many recoveries find the
 *   authority lapsed at once (the second insert conflicts and reads the first).
 * - `compensations_open` (the compensator's "still to do" index) covers held rows too.
 *
 * Frozen: the lists are spelled out here as they stand at this migration, never imported.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE approvals DROP CONSTRAINT approvals_kind_check,
      ADD CONSTRAINT approvals_kind_check CHECK (kind IN ('pivot', 'step', 'compensation', 'renewal'))`.execute(
    db,
  );
  await sql`CREATE UNIQUE INDEX approvals_one_pending_renewal ON approvals (run_id) WHERE status = 'pending' AND kind = 'renewal'`.execute(
    db,
  );
  await sql`
    ALTER TABLE compensations DROP CONSTRAINT compensations_status_check,
      ADD CONSTRAINT compensations_status_check
        CHECK (status IN ('pending', 'awaiting_approval', 'running', 'compensated', 'unknown', 'failed', 'skipped')),
      ADD COLUMN approval_id text REFERENCES approvals (id)`.execute(db);
  await sql`
    ALTER TABLE saga_log DROP CONSTRAINT saga_log_compensation_status_check,
      ADD CONSTRAINT saga_log_compensation_status_check
        CHECK (compensation_status IN ('pending', 'awaiting_approval', 'running', 'compensated', 'unknown', 'failed', 'skipped'))`.execute(
    db,
  );
  await sql`DROP INDEX compensations_open`.execute(db);
  await sql`CREATE INDEX compensations_open ON compensations (run_id) WHERE status IN ('pending', 'awaiting_approval', 'running', 'unknown', 'failed')`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX compensations_open`.execute(db);
  await sql`CREATE INDEX compensations_open ON compensations (run_id) WHERE status IN ('pending', 'running', 'unknown', 'failed')`.execute(
    db,
  );
  await sql`
    ALTER TABLE saga_log DROP CONSTRAINT saga_log_compensation_status_check,
      ADD CONSTRAINT saga_log_compensation_status_check
        CHECK (compensation_status IN ('pending', 'running', 'compensated', 'unknown', 'failed', 'skipped'))`.execute(
    db,
  );
  await sql`
    ALTER TABLE compensations DROP COLUMN approval_id, DROP CONSTRAINT compensations_status_check,
      ADD CONSTRAINT compensations_status_check
        CHECK (status IN ('pending', 'running', 'compensated', 'unknown', 'failed', 'skipped'))`.execute(db);
  await sql`DROP INDEX approvals_one_pending_renewal`.execute(db);
  await sql`
    ALTER TABLE approvals DROP CONSTRAINT approvals_kind_check,
      ADD CONSTRAINT approvals_kind_check CHECK (kind IN ('pivot', 'step'))`.execute(db);
}
