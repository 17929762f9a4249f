import { sql, type Kysely } from 'kysely';
import { sqlLiterals } from './sql-lists.js';

/**
 * Counters for the two gauge groups that used to read the whole history on every scrape (issue 10: a
 * periodic query costs the same with 10⁴ and 10⁶ settled steps). Each counter is written by a trigger in
 * the transaction that changes the rows it counts, so a count and the change it counts commit together or
 * not at all, whoever writes (API, executor, reconciler, compensator, an operator's SQL).
 *
 * **`run_status_counts`** (`saga_runs{status}`, `saga_irreversible_before_pivot_steps`): per run status,
 * how many runs are in it and the sum of their `irreversible_before_pivot`: exactly what a
 * `GROUP BY status` over `runs` gave, kept by deltas. A run's status changes once or twice in its life, so
 * the triggers fire per run, not per call:
 *
 * - INSERT and DELETE: one statement-level trigger each, over the statement's transition table, so a bulk
 *   insert (a bench's history, an import) is one upsert per status, not one per row on the same counter row.
 * - UPDATE: a row-level trigger limited to `UPDATE OF status, irreversible_before_pivot` and a WHEN that the
 *   value changed. The updates of every call (`cursor`, `updated_at`) do not name those columns, so the
 *   trigger is not even considered for them. (Transition tables are refused for column-limited triggers,
 *   and a statement-level UPDATE trigger would run on every call's cursor update.)
 * - TRUNCATE: clears the counts.
 *
 * Each delta is `INSERT … ON CONFLICT (status, shard) DO UPDATE SET runs = runs + excluded.runs`: an atomic
 * increment under the counter row's lock, so two transitions at once never lose a count. The row is
 * `(status, pg_backend_pid() % 16)`: a backend runs one transaction at a time, so two transactions wait on
 * each other's counter row only when their backends' pids collide modulo 16. A run created on one shard and
 * ended on another leaves +1 and −1 on different rows; only the sum over shards means anything. Why 16:
 * several pools of 10 connections write runs, and the read sums at most 16 rows per status.
 *
 * **Capture checks** (`saga_captures_without_reservation{tool}`): `capture_checks` holds the invariants
 * "a CONFIRMED `capture_tool` step needs a CONFIRMED `reservation_tool` step in its run". They live in the
 * schema, not in the collector's options, because they are evaluated when a step is written, by whichever
 * process writes it; only the database sees every write. `capture_check_runs` has one row per (run, check)
 * that has a confirmed step of either tool: how many of each are CONFIRMED. The gauge is the sum of
 * `captures_confirmed` over rows with no confirmed reservation, read through the partial index
 * `capture_check_runs_violating`, so a scrape costs the open violations (none, normally), not the history.
 *
 * The triggers on `saga_log` are row-level with a WHEN naming the checked tools as literals: for any other
 * tool (a `noop` call) the function never runs and nothing is written, no WAL, no lock; Postgres evaluates
 * the WHEN (a few text comparisons) on the row it already holds. A WHEN cannot read a table, so the tool list
 * is spelled here beside the rows of `capture_checks`, both from {@link CAPTURE_CHECKS}; a new check is a new
 * migration that inserts its row, re-creates these triggers with the new list and backfills its counts.
 * The per-run row is where a capture's and its reservation's confirmations meet: both upsert it, its lock
 * orders them, so a reservation confirmed at the same moment as its capture is never missed by both. The
 * executor's batched outcome write may confirm steps of several runs in one statement, locking their rows in
 * its row order; two batches locking two runs' rows in opposite orders is a deadlock only for payment steps
 * of the same two runs at once, and that batch already falls back to one outcome per statement.
 *
 * Existing rows are counted in the same transaction, after `LOCK TABLE runs, saga_log IN SHARE ROW EXCLUSIVE
 * MODE`: writers wait until this migration commits (and then fire the new triggers), so no row is written
 * between the backfill's read and the triggers taking over. The backfill reads both tables once: run the
 * migration in a quiet moment. Imports nothing live: statuses and tools are spelled as they stand here.
 */

/** The capture checks as they stand at this migration (the connectors' payment pair). */
const CAPTURE_CHECKS = [{ capture: 'capture_payment', reservation: 'authorize_payment' }] as const;
/** `StepStatus.CONFIRMED` as it stands at this migration. */
const CONFIRMED = sql.lit('CONFIRMED');
/** Why 16: see the header. */
const RUN_COUNT_SHARDS = sql.lit(16);

const checkedTools = sql.raw(sqlLiterals(CAPTURE_CHECKS.flatMap((c) => [c.capture, c.reservation])));

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`LOCK TABLE runs, saga_log IN SHARE ROW EXCLUSIVE MODE`.execute(db);

  await sql`
    CREATE TABLE run_status_counts (
      status                    text NOT NULL,
      shard                     smallint NOT NULL,
      runs                      bigint NOT NULL,
      irreversible_before_pivot bigint NOT NULL,
      PRIMARY KEY (status, shard)
    )`.execute(db);
  await sql`
    INSERT INTO run_status_counts (status, shard, runs, irreversible_before_pivot)
    SELECT status, 0, count(*), coalesce(sum(irreversible_before_pivot), 0) FROM runs GROUP BY status`.execute(
    db,
  );
  // Shared by the INSERT and DELETE triggers: both name their transition table `changed`.
  await sql`
    CREATE FUNCTION count_run_rows() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    DECLARE
      sign integer := CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END;
    BEGIN
      INSERT INTO run_status_counts AS c (status, shard, runs, irreversible_before_pivot)
      SELECT status, pg_backend_pid() % ${RUN_COUNT_SHARDS}, sign * count(*), sign * sum(irreversible_before_pivot)
        FROM changed GROUP BY status ORDER BY status
      ON CONFLICT (status, shard) DO UPDATE
         SET runs = c.runs + excluded.runs,
             irreversible_before_pivot = c.irreversible_before_pivot + excluded.irreversible_before_pivot;
      RETURN NULL;
    END $$`.execute(db);
  // The two deltas of one run, merged when the status did not change; in status order, so two transactions
  // on one shard lock its rows in the same order.
  await sql`
    CREATE FUNCTION count_run_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      INSERT INTO run_status_counts AS c (status, shard, runs, irreversible_before_pivot)
      SELECT d.status, pg_backend_pid() % ${RUN_COUNT_SHARDS}, sum(d.runs), sum(d.irreversible)
        FROM (VALUES (OLD.status, -1, -OLD.irreversible_before_pivot),
                     (NEW.status, 1, NEW.irreversible_before_pivot)) AS d (status, runs, irreversible)
       GROUP BY d.status ORDER BY d.status
      ON CONFLICT (status, shard) DO UPDATE
         SET runs = c.runs + excluded.runs,
             irreversible_before_pivot = c.irreversible_before_pivot + excluded.irreversible_before_pivot;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION clear_run_status_counts() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM run_status_counts;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER runs_count_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS changed
       FOR EACH STATEMENT EXECUTE FUNCTION count_run_rows()`.execute(db);
  await sql`
    CREATE TRIGGER runs_count_delete AFTER DELETE ON runs REFERENCING OLD TABLE AS changed
       FOR EACH STATEMENT EXECUTE FUNCTION count_run_rows()`.execute(db);
  await sql`
    CREATE TRIGGER runs_count_update AFTER UPDATE OF status, irreversible_before_pivot ON runs
       FOR EACH ROW
       WHEN (OLD.status IS DISTINCT FROM NEW.status
             OR OLD.irreversible_before_pivot IS DISTINCT FROM NEW.irreversible_before_pivot)
       EXECUTE FUNCTION count_run_change()`.execute(db);
  await sql`
    CREATE TRIGGER runs_count_truncate AFTER TRUNCATE ON runs
       FOR EACH STATEMENT EXECUTE FUNCTION clear_run_status_counts()`.execute(db);

  await sql`
    CREATE TABLE capture_checks (
      capture_tool     text PRIMARY KEY,
      reservation_tool text NOT NULL
    )`.execute(db);
  for (const c of CAPTURE_CHECKS)
    await sql`INSERT INTO capture_checks VALUES (${sql.lit(c.capture)}, ${sql.lit(c.reservation)})`.execute(
      db,
    );
  await sql`
    CREATE TABLE capture_check_runs (
      run_id                 text NOT NULL,
      capture_tool           text NOT NULL,
      captures_confirmed     integer NOT NULL,
      reservations_confirmed integer NOT NULL,
      PRIMARY KEY (run_id, capture_tool)
    )`.execute(db);
  await sql`
    CREATE INDEX capture_check_runs_violating ON capture_check_runs (capture_tool)
     WHERE captures_confirmed > 0 AND reservations_confirmed = 0`.execute(db);
  await sql`
    INSERT INTO capture_check_runs (run_id, capture_tool, captures_confirmed, reservations_confirmed)
    SELECT s.run_id, k.capture_tool,
           count(*) FILTER (WHERE s.tool = k.capture_tool), count(*) FILTER (WHERE s.tool = k.reservation_tool)
      FROM saga_log s JOIN capture_checks k ON s.tool IN (k.capture_tool, k.reservation_tool)
     WHERE s.status = ${CONFIRMED}
     GROUP BY s.run_id, k.capture_tool`.execute(db);
  // One function for insert, update and delete: OLD is null on INSERT and NEW on DELETE, and a row counts
  // only while CONFIRMED, so each side contributes its ±1 only when it should.
  await sql`
    CREATE FUNCTION count_capture_check_step() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      INSERT INTO capture_check_runs AS c (run_id, capture_tool, captures_confirmed, reservations_confirmed)
      SELECT d.run_id, k.capture_tool,
             coalesce(sum(d.n) FILTER (WHERE d.tool = k.capture_tool), 0),
             coalesce(sum(d.n) FILTER (WHERE d.tool = k.reservation_tool), 0)
        FROM (SELECT OLD.run_id, OLD.tool, -1 WHERE TG_OP <> 'INSERT' AND OLD.status = ${CONFIRMED}
              UNION ALL
              SELECT NEW.run_id, NEW.tool, 1 WHERE TG_OP <> 'DELETE' AND NEW.status = ${CONFIRMED})
             AS d (run_id, tool, n)
        JOIN capture_checks k ON d.tool IN (k.capture_tool, k.reservation_tool)
       GROUP BY d.run_id, k.capture_tool ORDER BY d.run_id, k.capture_tool
      ON CONFLICT (run_id, capture_tool) DO UPDATE
         SET captures_confirmed = c.captures_confirmed + excluded.captures_confirmed,
             reservations_confirmed = c.reservations_confirmed + excluded.reservations_confirmed;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION clear_capture_check_runs() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM capture_check_runs;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER saga_log_capture_check_insert AFTER INSERT ON saga_log FOR EACH ROW
       WHEN (NEW.tool IN (${checkedTools}) AND NEW.status = ${CONFIRMED})
       EXECUTE FUNCTION count_capture_check_step()`.execute(db);
  await sql`
    CREATE TRIGGER saga_log_capture_check_update AFTER UPDATE OF status, tool ON saga_log FOR EACH ROW
       WHEN ((OLD.tool IN (${checkedTools}) AND OLD.status = ${CONFIRMED})
             OR (NEW.tool IN (${checkedTools}) AND NEW.status = ${CONFIRMED}))
       EXECUTE FUNCTION count_capture_check_step()`.execute(db);
  await sql`
    CREATE TRIGGER saga_log_capture_check_delete AFTER DELETE ON saga_log FOR EACH ROW
       WHEN (OLD.tool IN (${checkedTools}) AND OLD.status = ${CONFIRMED})
       EXECUTE FUNCTION count_capture_check_step()`.execute(db);
  await sql`
    CREATE TRIGGER saga_log_capture_check_truncate AFTER TRUNCATE ON saga_log
       FOR EACH STATEMENT EXECUTE FUNCTION clear_capture_check_runs()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['insert', 'update', 'delete', 'truncate']) {
    await sql`DROP TRIGGER ${sql.id(`saga_log_capture_check_${t}`)} ON saga_log`.execute(db);
    await sql`DROP TRIGGER ${sql.id(`runs_count_${t}`)} ON runs`.execute(db);
  }
  for (const f of [
    'clear_capture_check_runs',
    'count_capture_check_step',
    'clear_run_status_counts',
    'count_run_change',
    'count_run_rows',
  ])
    await sql`DROP FUNCTION ${sql.id(f)}()`.execute(db);
  for (const t of ['capture_check_runs', 'capture_checks', 'run_status_counts'])
    await sql`DROP TABLE ${sql.table(t)}`.execute(db);
}
