import { sql, type Kysely } from 'kysely';

/**
 * The standard events of a call become data of its `saga_log` row (issue 10: WAL per call). Three events are
 * written by every durable call: its intake TRANSITION (NULL → INTENDED, cause `intake`), its first ATTEMPT
 * (the claim, at intake or by an executor) and that attempt's outcome TRANSITION (INTENDED → CONFIRMED |
 * FAILED | UNKNOWN). As rows of their own they cost three heap inserts and three primary-key entries a call,
 * 6 of its 15 WAL records and about 807 of its 2,205 WAL bytes (docs/benchmarks.md); as data of the row they
 * travel in the INSERT and the UPDATEs the call writes anyway.
 *
 * What changes:
 * - `step_events` is renamed `step_event_rows`: every other event (a lookup, a retry call, a compensation, a
 *   run transition, a decision, a second attempt and its outcome, a later change of status by the
 *   reconciler, the compensator or a person, an event of a slow form) is still written there, as a row. Its
 *   sequence (`step_events_id_seq`), primary key (`step_events_pkey (run_id, id)`), CHECK and trace trigger
 *   (`step_events_trace`, migration 0019) move with it under their names.
 * - `saga_log` gains typed columns for the three events, written once each by the statement that makes the
 *   event and never changed after (an event is there when its `…_event_id` is not null):
 *   - the intake TRANSITION: `intake_event_id`, `intake_event_at`, `intake_to` (INTENDED, or
 *     AWAITING_APPROVAL for a held call) and `intake_decision` (the call's decision, or null). The view
 *     gives `from` null, cause `intake` and `detail` `{args}` from the row's `args` (never stored twice),
 *     with `decision` when there is one;
 *   - the first ATTEMPT (`attempts` 0 → 1): `attempt_event_id`, `attempt_event_at`, `attempt_cause`,
 *     `attempt_worker`, `attempt_job_id` (null when the job id is the step's key, a first dispatch's id).
 *     The view gives `detail` `{attempt: 1, worker, jobId}`;
 *   - the outcome TRANSITION the executor's grouped statement recorded for that attempt, from INTENDED:
 *     `outcome_event_id`, `outcome_event_at`, `outcome_to`, `outcome_cause`, `outcome_detail`.
 *   Every event takes its `id` from `step_events_id_seq` when it is written, as a row's default does, so
 *   the journal's order and its paging by id are what they were; `…_at` is `clock_timestamp()` then, as a
 *   row's default; `actor` is null and `trace_id` the step's (immutable) `trace_id`, as the hot path wrote
 *   them. Anything a writer cannot store exactly in these columns it writes as a row instead.
 * - a view named `step_events` is the journal every reader reads: the rows of `step_event_rows` UNION ALL
 *   the standard events rebuilt from each `saga_log` row (a lateral VALUES of the three, so one read of
 *   the row). `WHERE run_id = $1` reaches `step_events_pkey` and `saga_log_pkey`.
 *
 * Why typed columns and where: a version of the row goes to the WAL as the bytes between the longest
 * common prefix and suffix of the old and new versions when it stays on its page, and whole when it does
 * not (migration 0021). The columns go at the end of the row, after `updated_at`, in the order outcome,
 * attempt, intake: the outcome changes `status` … `updated_at` and then its own columns, and the intake's
 * and the attempt's, written before, stay in the common suffix. Typed, the three events take 72 + 83 bytes
 * of the row; as jsonb objects `{id, at, …}` they took 314 + 196 (measured with `pg_column_size` on the
 * bench's shapes), and the bench's WAL per call was 1,978 B with those (2,196 B before this migration);
 * one jsonb array appended by each writer would even put the whole journal in every version (604 bytes).
 *
 * Existing events stay rows of `step_event_rows`; the new columns start null. `down` turns every stored
 * standard event back into a row (the view's own rows), then drops the view and the columns and renames
 * the table back. Frozen: the kinds, statuses and causes below are spelled out as they stand.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE step_events RENAME TO step_event_rows`.execute(db);
  await sql`
    ALTER TABLE saga_log
      ADD COLUMN outcome_event_id bigint, ADD COLUMN outcome_event_at timestamptz, ADD COLUMN outcome_to text,
      ADD COLUMN outcome_cause text, ADD COLUMN outcome_detail jsonb,
      ADD COLUMN attempt_event_id bigint, ADD COLUMN attempt_event_at timestamptz, ADD COLUMN attempt_cause text,
      ADD COLUMN attempt_worker text, ADD COLUMN attempt_job_id text,
      ADD COLUMN intake_event_id bigint, ADD COLUMN intake_event_at timestamptz, ADD COLUMN intake_to text,
      ADD COLUMN intake_decision jsonb`.execute(db);
  await sql`
    CREATE VIEW step_events AS
    SELECT r.id, r.run_id, r.step_idx, r.kind, r.from_status, r.to_status, r.cause, r.detail, r.at, r.actor,
           r.trace_id
      FROM step_event_rows r
    UNION ALL
    SELECT e.id, s.run_id, s.step_idx, e.kind, e.from_status, e.to_status, e.cause, e.detail, e.at,
           NULL::text AS actor, s.trace_id
      FROM saga_log s
     CROSS JOIN LATERAL (VALUES
       (s.intake_event_id, 'transition'::text, NULL::text, s.intake_to, 'intake'::text,
        CASE WHEN s.intake_decision IS NULL THEN jsonb_build_object('args', s.args)
             ELSE jsonb_build_object('args', s.args, 'decision', s.intake_decision) END,
        s.intake_event_at),
       (s.attempt_event_id, 'attempt', NULL, NULL, s.attempt_cause,
        jsonb_build_object('attempt', 1, 'worker', s.attempt_worker,
                           'jobId', coalesce(s.attempt_job_id, s.idempotency_key)),
        s.attempt_event_at),
       (s.outcome_event_id, 'transition', 'INTENDED', s.outcome_to, s.outcome_cause, s.outcome_detail,
        s.outcome_event_at)
     ) AS e(id, kind, from_status, to_status, cause, detail, at)
     WHERE e.id IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // The stored events become rows first (their trace id as the view gives it, so the trigger stays idle).
  await sql`
    INSERT INTO step_event_rows (id, run_id, step_idx, kind, from_status, to_status, cause, detail, at, actor,
                                 trace_id)
    SELECT v.id, v.run_id, v.step_idx, v.kind, v.from_status, v.to_status, v.cause, v.detail, v.at, v.actor,
           v.trace_id
      FROM step_events v
     WHERE NOT EXISTS (SELECT 1 FROM step_event_rows r WHERE r.run_id = v.run_id AND r.id = v.id)
     ORDER BY v.id`.execute(db);
  await sql`DROP VIEW step_events`.execute(db);
  await sql`
    ALTER TABLE saga_log
      DROP COLUMN outcome_event_id, DROP COLUMN outcome_event_at, DROP COLUMN outcome_to,
      DROP COLUMN outcome_cause, DROP COLUMN outcome_detail,
      DROP COLUMN attempt_event_id, DROP COLUMN attempt_event_at, DROP COLUMN attempt_cause,
      DROP COLUMN attempt_worker, DROP COLUMN attempt_job_id,
      DROP COLUMN intake_event_id, DROP COLUMN intake_event_at, DROP COLUMN intake_to,
      DROP COLUMN intake_decision`.execute(db);
  await sql`ALTER TABLE step_event_rows RENAME TO step_events`.execute(db);
}
