import { sql, type Kysely } from 'kysely';

/**
 * Fewer WAL records per call: fewer index entries for each row the hot path writes, and the updates of a
 * step that do not change its status HOT (heap-only tuple: the new row version goes on the same page and no
 * index gets a new entry). Every index entry is a WAL record of its own.
 *
 * A call writes its step four times: the intake's insert, the executor's claim (lease, attempt), its outcome
 * (status) and the delivered mark. An update can be HOT only when it changes no indexed column (key or
 * partial-index predicate) and the page has room. Before this migration none of them could:
 * - `saga_log_unsettled` was keyed on `(lease_until NULLS FIRST, updated_at)`, which the claim changes, so
 *   every claim wrote a new entry into every index of the table;
 * - `saga_log_tenant (tenant_id, run_id)`, which no query reads (steps are always reached through their run,
 *   whose row carries the tenant), took an entry on every insert and every non-HOT update;
 * - pages were filled to 100 %, so even an eligible update had to move to another page.
 *
 * Now:
 * - `saga_log_unsettled` keeps its predicate (the unresolved statuses: only unsettled rows are in it) and is
 *   keyed on `(run_id, step_idx)`, which never change. Its readers (the reconciler's claim and scans, the
 *   unclaimed-intents sweep and gauges) read every row of it, as before; the reconciler's order is now a sort
 *   of the unsettled rows instead of the index order, and that set is what a sweep reads anyway;
 * - `saga_log_tenant` is dropped;
 * - `saga_log` leaves 30 % of each new page free (`fillfactor = 70`) for the versions of its rows' updates.
 *   Why 70: a row is updated about three times within a second or two of its insert; the dead versions are
 *   pruned when the page is next touched, so the room is reused and a page holds its rows' whole life.
 *   Existing pages keep their fill until they are rewritten.
 *
 * - `step_events` is keyed by `(run_id, id)`: every read of the journal is one run's events in order, which
 *   the index `step_events_run (run_id, id)` served while the primary key `(id)` served none; the primary
 *   key now does both jobs (ids stay unique: they come from the table's sequence), one entry per event
 *   instead of two, and a call appends three events.
 *
 * The outcome still changes `status` (the predicate) and is never HOT; it stays on the page when there is
 * room, so its WAL record carries only the changed bytes of the row.
 *
 * Plain `CREATE INDEX` inside the migration's transaction: on a large log it blocks writers while it builds
 * (it reads only unsettled rows' index tuples it creates, but scans the table); run it in a quiet moment.
 * Imports nothing live: the status list is spelled out as it stands at this version.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX saga_log_unsettled`.execute(db);
  await sql`CREATE INDEX saga_log_unsettled ON saga_log (run_id, step_idx)
             WHERE status IN ('INTENDED', 'UNKNOWN')`.execute(db);
  await sql`DROP INDEX saga_log_tenant`.execute(db);
  await sql`ALTER TABLE saga_log SET (fillfactor = 70)`.execute(db);
  await sql`ALTER TABLE step_events DROP CONSTRAINT step_events_pkey, ADD PRIMARY KEY (run_id, id)`.execute(
    db,
  );
  await sql`DROP INDEX step_events_run`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX step_events_run ON step_events (run_id, id)`.execute(db);
  await sql`ALTER TABLE step_events DROP CONSTRAINT step_events_pkey, ADD PRIMARY KEY (id)`.execute(db);
  await sql`ALTER TABLE saga_log RESET (fillfactor)`.execute(db);
  await sql`CREATE INDEX saga_log_tenant ON saga_log (tenant_id, run_id)`.execute(db);
  await sql`DROP INDEX saga_log_unsettled`.execute(db);
  await sql`CREATE INDEX saga_log_unsettled ON saga_log (lease_until NULLS FIRST, updated_at)
             WHERE status IN ('INTENDED', 'UNKNOWN')`.execute(db);
}
