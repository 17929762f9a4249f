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
 *   run transition, a decision, a second attempt, a later change of status by the reconciler, the
 *   compensator or a person, an event of a slow form) is still written there, as a row. Its sequence
 *   (`step_events_id_seq`), primary key (`step_events_pkey (run_id, id)`), CHECK and trace trigger
 *   (`step_events_trace`, migration 0019) move with it under their names.
 * - `saga_log` gains three jsonb columns, one per standard event, each written once and then never changed
 *   (null: that event is a row, or has not happened, or was pruned):
 *   - `intake_event` `{id, at, to}` and, when the call had a decision, `detail: {decision}`. The view adds
 *     `detail.args` from the row's `args` (never stored twice), `kind` transition, `from` null, cause `intake`;
 *   - `attempt_event` `{id, at, cause, detail}`, the step's first attempt (`attempts` went 0 → 1); `kind`
 *     attempt, `from` and `to` null;
 *   - `outcome_event` `{id, at, from, to, cause, detail}`, the outcome the executor's grouped statement
 *     recorded for the first attempt; `kind` transition.
 *   Every event takes its `id` from `step_events_id_seq` when it is written, as a row's default does, so
 *   the journal's order and its paging by id are what they were; `at` is `clock_timestamp()` then, as a
 *   row's default; `actor` is null and `trace_id` the step's (immutable) `trace_id`, as the hot path wrote
 *   them. Anything a writer cannot store exactly in these shapes it writes as a row instead.
 * - a view named `step_events` is the journal every reader reads: the rows of `step_event_rows` UNION ALL
 *   the standard events rebuilt from each `saga_log` row (a lateral VALUES of the three columns, so one
 *   read of the row). `WHERE run_id = $1` reaches `step_events_pkey` and `saga_log_pkey`.
 *
 * Where the columns go, and why: at the end of the row, after `updated_at`, in the order outcome, attempt,
 * intake. Postgres logs an UPDATE that stays on its page as the bytes between the longest common prefix and
 * suffix of the two versions (migration 0021). The outcome changes `status` … `updated_at` and then
 * `outcome_event`; the intake's and the attempt's events, written before, lie after it and stay in the
 * common suffix, so the outcome's record grows only by its own event. A single array appended by each
 * writer would put the whole journal in every version (a jsonb's header changes when it grows): measured
 * 604 bytes for the three events, against about 200 for the outcome's alone.
 *
 * Existing events stay rows of `step_event_rows`; the new columns start null. `down` turns every stored
 * standard event back into a row (the view's own rows), then drops the view and the columns and renames
 * the table back. Frozen: the kinds, statuses and causes below are spelled out as they stand.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE step_events RENAME TO step_event_rows`.execute(db);
  await sql`
    ALTER TABLE saga_log ADD COLUMN outcome_event jsonb, ADD COLUMN attempt_event jsonb,
                         ADD COLUMN intake_event jsonb`.execute(db);
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
       ((s.intake_event->>'id')::bigint, 'transition'::text, NULL::text, s.intake_event->>'to', 'intake'::text,
        jsonb_build_object('args', s.args) || coalesce(s.intake_event->'detail', '{}'::jsonb),
        (s.intake_event->>'at')::timestamptz),
       ((s.attempt_event->>'id')::bigint, 'attempt', NULL, NULL, s.attempt_event->>'cause',
        s.attempt_event->'detail', (s.attempt_event->>'at')::timestamptz),
       ((s.outcome_event->>'id')::bigint, 'transition', s.outcome_event->>'from', s.outcome_event->>'to',
        s.outcome_event->>'cause', s.outcome_event->'detail', (s.outcome_event->>'at')::timestamptz)
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
    ALTER TABLE saga_log DROP COLUMN intake_event, DROP COLUMN attempt_event, DROP COLUMN outcome_event`.execute(
    db,
  );
  await sql`ALTER TABLE step_event_rows RENAME TO step_events`.execute(db);
}
