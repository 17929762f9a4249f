import { sql, type Kysely } from 'kysely';

/**
 * A narrower `saga_log` row, and room on its page for the outcome's new version (issue 10: WAL bytes per
 * call). Every durable call writes its row once (the intake's INSERT, logged whole) and changes it once or
 * twice (the claim, the outcome: logged as the bytes between the versions' common prefix and suffix when the
 * new version stays on its page, whole when it does not). Measured on the bench's rows (`pg_column_size`,
 * 633 bytes a row), this cuts what every version carries:
 *
 * - **fillfactor 50** (70 since migration 0010): inserts fill a page half way, so the outcome's new version
 *   finds room beside the old one and is logged as its changed bytes (~130) instead of whole (~680); at 70
 *   about four outcomes in ten left their page. The price is a log whose heap takes more pages for the same
 *   rows (measured: +25 % at 20,000 rows, vacuumed);
 * - **`payload_hash` as its 32 bytes** (`bytea`, was 64 hex characters): decoded from hex by the writers;
 *   read it as `encode(payload_hash, 'hex')`. A value that was not a lowercase hex sha256 (a hand-written
 *   row) is kept as its UTF-8 bytes;
 * - **`compensation` as `json`** (text, was `jsonb`: 184 bytes of the bench's command against 131 as
 *   text): the command is written once, read whole by the compensator and the API, and never queried inside
 *   by SQL, so jsonb's per-key headers bought nothing;
 * - **the standard events' usual values stored as null** (the columns of migration 0022): the intake's
 *   `to` INTENDED, the first attempt's cause `api: claimed at intake` (a step claimed at intake by the API's
 *   inline executor), the outcome's `to` CONFIRMED, its cause `executor: tool returned` and its detail `{}`.
 *   The view `step_events` gives them back (`coalesce`), so every reader sees the journal it saw; an event is
 *   still there when its id is not null. Rows written before keep their values. (The intake's time stays
 *   stored: the row's `created_at` is its transaction's start, which would put a grouped intake's events
 *   out of order in time.)
 *
 * `down` writes the usual values back into the columns, restores the view of migration 0022, the types
 * (`encode(…, 'hex')`, `::jsonb`) and fillfactor 70. Frozen: the values below are spelled out as they stand.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP VIEW step_events`.execute(db);
  await sql`
    ALTER TABLE saga_log
      ALTER COLUMN payload_hash TYPE bytea
        USING CASE WHEN payload_hash ~ '^[0-9a-f]{64}$' THEN decode(payload_hash, 'hex')
                   ELSE convert_to(payload_hash, 'UTF8') END,
      ALTER COLUMN compensation TYPE json USING compensation::json,
      SET (fillfactor = 50)`.execute(db);
  await createView(db, {
    intakeTo: sql`coalesce(s.intake_to, 'INTENDED')`,
    attemptCause: sql`coalesce(s.attempt_cause, 'api: claimed at intake')`,
    outcomeTo: sql`coalesce(s.outcome_to, 'CONFIRMED')`,
    outcomeCause: sql`coalesce(s.outcome_cause, 'executor: tool returned')`,
    outcomeDetail: sql`coalesce(s.outcome_detail, '{}'::jsonb)`,
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP VIEW step_events`.execute(db);
  await sql`
    UPDATE saga_log
       SET intake_to = 'INTENDED' WHERE intake_event_id IS NOT NULL AND intake_to IS NULL`.execute(db);
  await sql`
    UPDATE saga_log SET attempt_cause = 'api: claimed at intake'
     WHERE attempt_event_id IS NOT NULL AND attempt_cause IS NULL`.execute(db);
  await sql`
    UPDATE saga_log
       SET outcome_to = coalesce(outcome_to, 'CONFIRMED'),
           outcome_cause = coalesce(outcome_cause, 'executor: tool returned'),
           outcome_detail = coalesce(outcome_detail, '{}'::jsonb)
     WHERE outcome_event_id IS NOT NULL
       AND (outcome_to IS NULL OR outcome_cause IS NULL OR outcome_detail IS NULL)`.execute(db);
  await sql`
    ALTER TABLE saga_log
      ALTER COLUMN payload_hash TYPE text USING encode(payload_hash, 'hex'),
      ALTER COLUMN compensation TYPE jsonb USING compensation::jsonb,
      SET (fillfactor = 70)`.execute(db);
  await createView(db, {
    intakeTo: sql`s.intake_to`,
    attemptCause: sql`s.attempt_cause`,
    outcomeTo: sql`s.outcome_to`,
    outcomeCause: sql`s.outcome_cause`,
    outcomeDetail: sql`s.outcome_detail`,
  });
}

/** The view `step_events` of migration 0022, with the stored events' values given by `v`. */
async function createView(
  db: Kysely<unknown>,
  v: Record<
    'intakeTo' | 'attemptCause' | 'outcomeTo' | 'outcomeCause' | 'outcomeDetail',
    ReturnType<typeof sql>
  >,
): Promise<void> {
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
       (s.intake_event_id, 'transition'::text, NULL::text, ${v.intakeTo}, 'intake'::text,
        CASE WHEN s.intake_decision IS NULL THEN jsonb_build_object('args', s.args)
             ELSE jsonb_build_object('args', s.args, 'decision', s.intake_decision) END,
        s.intake_event_at),
       (s.attempt_event_id, 'attempt', NULL, NULL, ${v.attemptCause},
        jsonb_build_object('attempt', 1, 'worker', s.attempt_worker,
                           'jobId', coalesce(s.attempt_job_id, s.idempotency_key)),
        s.attempt_event_at),
       (s.outcome_event_id, 'transition', 'INTENDED', ${v.outcomeTo}, ${v.outcomeCause}, ${v.outcomeDetail},
        s.outcome_event_at)
     ) AS e(id, kind, from_status, to_status, cause, detail, at)
     WHERE e.id IS NOT NULL`.execute(db);
}
