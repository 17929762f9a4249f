import { sql, type Kysely } from 'kysely';

/**
 * Drops the unique index on `saga_log.idempotency_key` (issue 10: WAL per call). The key is derived from
 * `(run, step, tool)` (`stepKey`), so the primary key `(run_id, step_idx)` already makes it unique; every
 * reader that needs a step has its run and index (the execute job carries both, the claims find the step by
 * its primary key and check the key as a guard). The index cost every intake an index entry on a random key
 * (2.5 WAL records and ~315 B per call, measured with pg_walinspect) and, on a large log, a full-page image
 * of a leaf page after almost every checkpoint (~3.6 KB per call with 300k steps in the log).
 *
 * `down` puts the constraint back (it holds on any data this version wrote, for the reason above).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE saga_log DROP CONSTRAINT saga_log_idempotency_key_key`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE saga_log ADD CONSTRAINT saga_log_idempotency_key_key UNIQUE (idempotency_key)`.execute(
    db,
  );
}
