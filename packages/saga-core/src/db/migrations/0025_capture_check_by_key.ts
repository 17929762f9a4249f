import { sql, type Kysely } from 'kysely';
import { sqlLiterals } from './sql-lists.js';

/**
 * The capture-check counter (migration 0008) finds its checks by key, not by reading `capture_checks`
 * whole.
 *
 * The trigger function `count_capture_check_step` joined each confirmed payment step to `capture_checks` on
 * `tool IN (capture_tool, reservation_tool)`, which no index answers: a sequential scan. The executor's and
 * the API's grouped statements (`recordOutcomeBatch`) fire that trigger, and they run on a pool with
 * `enable_seqscan = off` (db/connect.ts, `GROUPED_STATEMENT_SETTINGS`), where a scan that has no alternative
 * is still chosen but costed at 10¹⁰. Postgres then JIT-compiled the trigger's statement on every execution
 * (inlining and optimising: it costs above every `jit_*_above_cost`): 250–340 ms of Postgres CPU per
 * confirmed authorization or capture, measured with `pg_stat_statements` and `auto_explain` in
 * `pnpm simulate` (41 s of JIT in a run of 146 s; a third of Postgres's CPU).
 *
 * Now each side is looked up by an index: `capture_tool` by the primary key, `reservation_tool` by a new
 * index, in a lateral `UNION ALL` that yields one row per (check, role of the tool in it), so the counts are
 * what the old join's `FILTER`s gave, a tool that is both sides of one check included. The triggers are
 * re-pointed at the new function (0008's stays, unused, so that `down` restores it as it was); their `WHEN`
 * lists spell the same two tools as 0008's.
 */

/** The tools 0008's triggers name (its `CAPTURE_CHECKS`, capture and reservation), spelled again here. */
const checkedTools = sql.raw(sqlLiterals(['capture_payment', 'authorize_payment']));
/** `StepStatus.CONFIRMED` as it stands at this migration. */
const CONFIRMED = sql.lit('CONFIRMED');

/** Re-creates 0008's three row triggers on `saga_log`, unchanged but for the function they execute. */
async function pointCaptureCheckTriggersAt(db: Kysely<unknown>, fn: string): Promise<void> {
  const execute = sql.raw(`EXECUTE FUNCTION ${fn}()`);
  for (const t of ['insert', 'update', 'delete'])
    await sql`DROP TRIGGER ${sql.id(`saga_log_capture_check_${t}`)} ON saga_log`.execute(db);
  await sql`
    CREATE TRIGGER saga_log_capture_check_insert AFTER INSERT ON saga_log FOR EACH ROW
       WHEN (NEW.tool IN (${checkedTools}) AND NEW.status = ${CONFIRMED})
       ${execute}`.execute(db);
  await sql`
    CREATE TRIGGER saga_log_capture_check_update AFTER UPDATE OF status, tool ON saga_log FOR EACH ROW
       WHEN ((OLD.tool IN (${checkedTools}) AND OLD.status = ${CONFIRMED})
             OR (NEW.tool IN (${checkedTools}) AND NEW.status = ${CONFIRMED}))
       ${execute}`.execute(db);
  await sql`
    CREATE TRIGGER saga_log_capture_check_delete AFTER DELETE ON saga_log FOR EACH ROW
       WHEN (OLD.tool IN (${checkedTools}) AND OLD.status = ${CONFIRMED})
       ${execute}`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX capture_checks_reservation ON capture_checks (reservation_tool)`.execute(db);
  await sql`
    CREATE FUNCTION count_capture_check_by_key() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      INSERT INTO capture_check_runs AS c (run_id, capture_tool, captures_confirmed, reservations_confirmed)
      SELECT d.run_id, k.capture_tool,
             coalesce(sum(d.n) FILTER (WHERE k.is_capture), 0),
             coalesce(sum(d.n) FILTER (WHERE NOT k.is_capture), 0)
        FROM (SELECT OLD.run_id, OLD.tool, -1 WHERE TG_OP <> 'INSERT' AND OLD.status = ${CONFIRMED}
              UNION ALL
              SELECT NEW.run_id, NEW.tool, 1 WHERE TG_OP <> 'DELETE' AND NEW.status = ${CONFIRMED})
             AS d (run_id, tool, n)
        CROSS JOIN LATERAL (
              SELECT capture_tool, true FROM capture_checks WHERE capture_tool = d.tool
              UNION ALL
              SELECT capture_tool, false FROM capture_checks WHERE reservation_tool = d.tool)
             AS k (capture_tool, is_capture)
       GROUP BY d.run_id, k.capture_tool ORDER BY d.run_id, k.capture_tool
      ON CONFLICT (run_id, capture_tool) DO UPDATE
         SET captures_confirmed = c.captures_confirmed + excluded.captures_confirmed,
             reservations_confirmed = c.reservations_confirmed + excluded.reservations_confirmed;
      RETURN NULL;
    END $$`.execute(db);
  await pointCaptureCheckTriggersAt(db, 'count_capture_check_by_key');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await pointCaptureCheckTriggersAt(db, 'count_capture_check_step');
  await sql`DROP FUNCTION count_capture_check_by_key()`.execute(db);
  await sql`DROP INDEX capture_checks_reservation`.execute(db);
}
