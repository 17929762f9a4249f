import { sql, type Kysely } from 'kysely';

/**
 * Metrics segmented by saga definition, and the record of business invariants that failed (issue 12).
 * Both are read on every scrape, so both are counters kept by deltas (issue 10: a periodic query costs the
 * same with 10⁴ and 10⁶ settled steps); nothing here reads `saga_log`.
 *
 * **`definition_run_counts`** (`saga_definition_runs{definition,status}`, `…_entered_total`): per
 * definition name and run status, `runs` is how many runs of the definition are in the status, `entered`
 * how many moves into the status there ever were (an unwind is a move into COMPENSATING, a person's turn a
 * move into MANUAL_INTERVENTION; a run sent back and ended again counts twice). Unbound runs are the row
 * `definition = ''`:
 *
 * - their `runs` are never kept here: an unbound run's current count is `run_status_counts` minus the bound
 *   ones, so creating an unbound run (the hot path) fires nothing new: the INSERT and DELETE triggers are
 *   row-level with a WHEN on `definition_name IS NOT NULL`, evaluated on the row Postgres already holds;
 * - their `entered` is kept by the UPDATE trigger, which, like 0008's, is limited to
 *   `UPDATE OF status, definition_name` with a WHEN that a value changed: it fires on a run's few status
 *   moves, never on a call's cursor or `updated_at` update.
 *
 * Each delta is an `INSERT … ON CONFLICT DO UPDATE` increment on `(definition, status, pg_backend_pid() %
 * 16)`, as in 0008 (why 16: see there); only the sum over shards means anything.
 *
 * **`invariant_violations`**: one row per failed check of a definition's invariant at a run's end (which
 * definition, the clause that failed, which end: the run status it was to get, COMPLETED or COMPENSATED), with `restored_at` set when a later check of the same run
 * found it holding again; partial index `invariant_violations_open` for the open ones.
 * **`invariant_violation_counts`** (`saga_invariant_violations_total{definition}`,
 * `saga_invariant_restored_total`, `saga_invariant_restore_seconds_sum`): per definition, written in the
 * transaction that writes the violation or its restoration (violations are rare: no shards).
 *
 * Existing bound runs are counted after `LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE`, so no run moves
 * between the backfill's read and the triggers taking over (their `entered` starts at 0). A run's creation is not a move: `entered` counts transitions only. Imports nothing live.
 */

/** Why 16: as 0008's `run_status_counts`. */
const SHARDS = sql.lit(16);

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE`.execute(db);
  await sql`
    CREATE TABLE definition_run_counts (
      definition text NOT NULL,
      status     text NOT NULL,
      shard      smallint NOT NULL,
      runs       bigint NOT NULL,
      entered    bigint NOT NULL,
      PRIMARY KEY (definition, status, shard)
    )`.execute(db);
  await sql`
    INSERT INTO definition_run_counts (definition, status, shard, runs, entered)
    SELECT definition_name, status, 0, count(*), 0 FROM runs
     WHERE definition_name IS NOT NULL GROUP BY definition_name, status`.execute(db);
  // One function for the three row triggers: the deltas of OLD and NEW, merged when they land on one row,
  // in (definition, status) order so two transactions on one shard lock their rows in the same order.
  await sql`
    CREATE FUNCTION count_definition_run() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      INSERT INTO definition_run_counts AS c (definition, status, shard, runs, entered)
      SELECT d.definition, d.status, pg_backend_pid() % ${SHARDS}, sum(d.runs), sum(d.entered)
        FROM (
          SELECT OLD.definition_name, OLD.status, -1, 0 WHERE TG_OP IN ('UPDATE', 'DELETE') AND OLD.definition_name IS NOT NULL
          UNION ALL
          SELECT NEW.definition_name, NEW.status, 1, 0
           WHERE TG_OP IN ('INSERT', 'UPDATE') AND NEW.definition_name IS NOT NULL
          UNION ALL
          -- A move into a status, bound or not (an unbound run's only row here).
          SELECT coalesce(NEW.definition_name, ''), NEW.status, 0, 1
           WHERE TG_OP = 'UPDATE' AND OLD.status IS DISTINCT FROM NEW.status
        ) AS d (definition, status, runs, entered)
       GROUP BY d.definition, d.status ORDER BY d.definition, d.status
      ON CONFLICT (definition, status, shard) DO UPDATE
         SET runs = c.runs + excluded.runs, entered = c.entered + excluded.entered;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER runs_definition_count_insert AFTER INSERT ON runs
       FOR EACH ROW WHEN (NEW.definition_name IS NOT NULL)
       EXECUTE FUNCTION count_definition_run()`.execute(db);
  await sql`
    CREATE TRIGGER runs_definition_count_update AFTER UPDATE OF status, definition_name ON runs
       FOR EACH ROW
       WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.definition_name IS DISTINCT FROM NEW.definition_name)
       EXECUTE FUNCTION count_definition_run()`.execute(db);
  await sql`
    CREATE TRIGGER runs_definition_count_delete AFTER DELETE ON runs
       FOR EACH ROW WHEN (OLD.definition_name IS NOT NULL)
       EXECUTE FUNCTION count_definition_run()`.execute(db);
  await sql`
    CREATE FUNCTION clear_definition_run_counts() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM definition_run_counts;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER runs_definition_count_truncate AFTER TRUNCATE ON runs
       FOR EACH STATEMENT EXECUTE FUNCTION clear_definition_run_counts()`.execute(db);

  await sql`
    CREATE TABLE invariant_violations (
      run_id             text NOT NULL,
      detected_at        timestamptz NOT NULL DEFAULT now(),
      tenant_id          text NOT NULL,
      definition_name    text NOT NULL,
      definition_version integer NOT NULL,
      ending             text NOT NULL,
      clause             text NOT NULL,
      restored_at        timestamptz,
      PRIMARY KEY (run_id, detected_at)
    )`.execute(db);
  await sql`CREATE INDEX invariant_violations_open ON invariant_violations (run_id) WHERE restored_at IS NULL`.execute(
    db,
  );
  await sql`
    CREATE TABLE invariant_violation_counts (
      definition      text PRIMARY KEY,
      violations      bigint NOT NULL,
      restored        bigint NOT NULL,
      restore_seconds float8 NOT NULL
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['insert', 'update', 'delete', 'truncate'])
    await sql`DROP TRIGGER ${sql.id(`runs_definition_count_${t}`)} ON runs`.execute(db);
  for (const f of ['count_definition_run', 'clear_definition_run_counts'])
    await sql`DROP FUNCTION ${sql.id(f)}()`.execute(db);
  for (const t of ['invariant_violation_counts', 'invariant_violations', 'definition_run_counts'])
    await sql`DROP TABLE ${sql.table(t)}`.execute(db);
}
