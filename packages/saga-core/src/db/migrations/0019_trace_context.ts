import { sql, type Kysely } from 'kysely';

/**
 * Trace context (issue 14: W3C traceparent, OpenTelemetry).
 *
 * - `saga_log.trace_id` (16 bytes) and `saga_log.span_id` (8 bytes): the trace a step belongs to and the
 *   span of its intake, the parent of every later span of the step (the executor's call, a reconciler's
 *   lookup, a compensation, a person's decision). Written with the intent, never changed. bytea rather
 *   than hex text: the row is written several times per call and each version goes to the WAL whole
 *   (26 bytes a version instead of 50).
 * - `step_events.trace_id`: the step's trace id on every event of the step. The hot-path statements (the
 *   intake, the claim, the outcome) copy it from the row they have in hand; for every other writer the
 *   trigger below copies it from the step's row, so no event of a traced step goes without it. The trigger
 *   runs only for an event written without one (its WHEN clause is checked without calling the function),
 *   so the hot path pays nothing for it. A run's own events (`step_idx` null) carry none.
 *
 * Null for steps and events written before this migration. The trigger function pins its search path,
 * as `saga_earlier_operation` does (migration 0016), so it reads the schema it was created in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE saga_log ADD COLUMN trace_id bytea, ADD COLUMN span_id bytea`.execute(db);
  await sql`ALTER TABLE step_events ADD COLUMN trace_id bytea`.execute(db);
  await sql`
    CREATE FUNCTION saga_step_event_trace() RETURNS trigger
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      NEW.trace_id := (SELECT s.trace_id FROM saga_log s
                        WHERE s.run_id = NEW.run_id AND s.step_idx = NEW.step_idx);
      RETURN NEW;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER step_events_trace BEFORE INSERT ON step_events
      FOR EACH ROW WHEN (NEW.trace_id IS NULL AND NEW.step_idx IS NOT NULL)
      EXECUTE FUNCTION saga_step_event_trace()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER step_events_trace ON step_events`.execute(db);
  await sql`DROP FUNCTION saga_step_event_trace()`.execute(db);
  await sql`ALTER TABLE step_events DROP COLUMN trace_id`.execute(db);
  await sql`ALTER TABLE saga_log DROP COLUMN trace_id, DROP COLUMN span_id`.execute(db);
}
