import { sql, type RawBuilder } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import type { RunStatus } from '../runs/run-status.js';
import { TERMINAL_RUN_STATUSES } from '../runs/run-status.js';
import { RUN_TRANSITIONS } from '../runs/run-transitions.js';
import { STANDARD_EVENT_COLUMNS } from '../steps/standard-events.js';

/**
 * Retention of the two tables that only grow: `outbox` (one row per dispatch) and `step_events` (the
 * journal of every transition, attempt and lookup). One function, called by `agent-saga prune` and by the
 * reconciler's scheduled job, so both delete exactly the same rows.
 *
 * What goes:
 * - published outbox rows, published before the cutoff, of a run that is final;
 * - events written before the cutoff, of a run that is final: the rows of `step_event_rows` are deleted and
 *   the standard events stored in the `saga_log` row (migration 0022) are set to null, so the journal
 *   (the view `step_events`) loses both alike.
 *
 * "Final" is a terminal run status that no transition leaves ({@link PRUNABLE_RUN_STATUSES}: COMPLETED,
 * COMPENSATED, PARTIALLY_COMPENSATED, COMMITTED_WITH_REPAIR), and the run has not changed since the cutoff
 * (`runs.updated_at`, set by every status change, is at or after the moment it became final).
 *
 * What never goes, and why:
 * - a `saga_log` row: a step's row and its idempotency key are what make a replay of the call a no-op and
 *   what the run view shows (its status, result, attempts are columns of the row, not rebuilt from events);
 * - an unpublished outbox row: it is a dispatch the relay still owes;
 * - anything of a run that is not final. MANUAL_INTERVENTION is terminal for the harness but an operator
 *   may send the run back to RUNNING or COMPENSATING, and then the re-dispatch budget, the next dispatch
 *   number and the republisher read that run's events and outbox rows again. A run still RUNNING keeps its
 *   rows too, however old (complete or unwind runs to let retention reach them).
 *
 * What a reader sees afterwards: `GET /v1/runs/{id}` answers as before, every step with its status; the
 * `decision` of a step (read from its events) becomes null; `GET /v1/runs/{id}/events` lists only the
 * events kept (those written after the cutoff, e.g. a later decision about a correction).
 *
 * Batches: each statement deletes at most `batchSize` rows and commits on its own, so no lock is held for
 * longer than one batch and a role's `statement_timeout` is never near. Each table is walked once in key
 * order (a keyset cursor: `outbox.id`, `runs.run_id`), so a call's cost is one pass, whatever was pruned
 * before. One prune at a time per schema (an advisory lock): several reconcilers and an operator never
 * walk the same rows at once; the one that finds the lock taken reports `busy` and does nothing.
 */

/**
 * The run statuses whose rows retention may prune: terminal, and no transition leaves them. Derived from
 * the run state machine, so a new exit from a terminal status takes that status out of retention by itself.
 */
export const PRUNABLE_RUN_STATUSES: readonly RunStatus[] = TERMINAL_RUN_STATUSES.filter(
  (s) => !Object.values(RUN_TRANSITIONS).some((sources) => (sources as readonly RunStatus[]).includes(s)),
);

/**
 * Why 5,000 rows a statement: a batch of outbox or event rows deletes in tens of milliseconds, far inside
 * any statement timeout, while keeping the number of round trips for a million rows at two hundred.
 */
export const DEFAULT_PRUNE_BATCH_SIZE = 5_000;

export interface PruneLogOptions {
  /** Rows older than this many milliseconds (by the database's clock) may go. */
  readonly olderThanMs: number;
  /** Count what would go, delete nothing. */
  readonly dryRun?: boolean;
  /** Rows per DELETE statement ({@link DEFAULT_PRUNE_BATCH_SIZE}). */
  readonly batchSize?: number;
  /** Checked between batches: an aborted prune stops after the batch under way and reports what it did. */
  readonly signal?: AbortSignal;
}

export interface PruneLogResult {
  /** `now() - olderThan` on the database's clock, taken once for the whole call. */
  readonly cutoff: Date;
  readonly dryRun: boolean;
  /** Outbox rows deleted (or, dry, that would be). */
  readonly outboxRows: number;
  /** Step events deleted, rows and events stored in a step's row alike (or, dry, that would be). */
  readonly stepEvents: number;
  /** DELETE (and, for the events stored in a row, UPDATE) statements run (0 when dry). */
  readonly batches: number;
  /** True when `signal` stopped the call before it was done. */
  readonly stopped: boolean;
  /** True when another prune of this schema held the lock: nothing was done (a dry run never waits). */
  readonly busy: boolean;
}

/** Deletes (or counts) the prunable rows described above. Parameters: see {@link PruneLogOptions}. */
export async function pruneLog(db: SagaDb, o: PruneLogOptions): Promise<PruneLogResult> {
  if (!Number.isSafeInteger(o.olderThanMs) || o.olderThanMs <= 0)
    throw new RangeError(`olderThanMs must be a positive whole number of milliseconds, not ${o.olderThanMs}`);
  const batchSize = o.batchSize ?? DEFAULT_PRUNE_BATCH_SIZE;
  if (!Number.isSafeInteger(batchSize) || batchSize <= 0)
    throw new RangeError(`batchSize must be a positive whole number, not ${batchSize}`);
  const cutoff = await cutoffOf(db, o.olderThanMs);
  const statuses = [...PRUNABLE_RUN_STATUSES];
  if (o.dryRun) {
    const [outboxRows, stepEvents] = await Promise.all([
      countOutbox(db, cutoff, statuses),
      countEvents(db, cutoff, statuses),
    ]);
    return { cutoff, dryRun: true, outboxRows, stepEvents, batches: 0, stopped: false, busy: false };
  }
  // One connection for the whole prune: the session lock below lives on it, and each batch commits on it.
  return db.connection().execute(async (conn) => {
    if (!(await tryPruneLock(conn))) {
      return { cutoff, dryRun: false, outboxRows: 0, stepEvents: 0, batches: 0, stopped: false, busy: true };
    }
    try {
      let batches = 0;
      let stopped = false;
      const walk = async (batch: (after: string) => Promise<BatchResult>, first: string): Promise<number> => {
        let total = 0;
        let after = first;
        for (;;) {
          if (o.signal?.aborted) {
            stopped = true;
            return total;
          }
          const { n, last } = await batch(after);
          batches += 1;
          total += n;
          if (n < batchSize || last === null) return total;
          after = last;
        }
      };
      const outboxRows = await walk(
        (after) => deleteOutboxBatch(conn, cutoff, statuses, after, batchSize),
        '0',
      );
      const eventRows = await walk(
        (after) => deleteEventsBatch(conn, cutoff, statuses, after, batchSize),
        '',
      );
      const storedEvents = await walk(
        (after) => clearStoredEventsBatch(conn, cutoff, statuses, after, batchSize),
        '',
      );
      const stepEvents = eventRows + storedEvents;
      return { cutoff, dryRun: false, outboxRows, stepEvents, batches, stopped, busy: false };
    } finally {
      await sql`SELECT pg_advisory_unlock(${PRUNE_LOCK}) AS ok`.execute(conn);
    }
  });
}

/** What one DELETE batch did: rows deleted, and the cursor to go on from (null when none). */
interface BatchResult {
  readonly n: number;
  readonly last: string | null;
}

/**
 * The advisory lock that lets one prune run at a time per saga schema (the reconcilers of a pool and an
 * operator's `agent-saga prune`). A session lock, not a transaction lock: the batches commit one by one
 * and must not sit in one long transaction. A process that dies holding it ends its session, which frees it.
 */
const PRUNE_LOCK = sql`hashtext(current_schema() || ':prune-log')`;

async function tryPruneLock(conn: SagaDb): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`SELECT pg_try_advisory_lock(${PRUNE_LOCK}) AS ok`.execute(conn);
  return r.rows[0]!.ok;
}

/**
 * What makes the run `r` final for retention: one of `statuses` (the final ones, see above) and unchanged
 * since the cutoff. The one spelling of the rule every batch and count below joins its rows' runs by.
 */
function finalRunBefore(cutoff: Date, statuses: readonly string[]): RawBuilder<boolean> {
  return sql<boolean>`r.status = ANY(${statuses}::text[]) AND r.updated_at < ${cutoff}`;
}

async function cutoffOf(db: SagaDb, olderThanMs: number): Promise<Date> {
  const r = await sql<{ cutoff: Date }>`
    SELECT now() - ${olderThanMs} * interval '1 millisecond' AS cutoff`.execute(db);
  return r.rows[0]!.cutoff;
}

/**
 * One batch of outbox rows, in id order after `after` (exclusive). Parameters: cutoff, statuses, after,
 * limit. Walks `outbox_pkey`; each row's run by `runs_pkey`.
 */
async function deleteOutboxBatch(
  db: SagaDb,
  cutoff: Date,
  statuses: readonly string[],
  after: string,
  limit: number,
): Promise<BatchResult> {
  const r = await sql<BatchResult>`
    WITH doomed AS (
      SELECT o.id FROM outbox o JOIN runs r ON r.run_id = o.run_id
       WHERE o.id > ${after}::bigint
         AND o.published_at IS NOT NULL AND o.published_at < ${cutoff}
         AND ${finalRunBefore(cutoff, statuses)}
       ORDER BY o.id
       LIMIT ${limit}),
    gone AS (DELETE FROM outbox o USING doomed d WHERE o.id = d.id RETURNING o.id)
    SELECT count(*)::int AS n, max(id)::text AS last FROM gone`.execute(db);
  return r.rows[0]!;
}

/**
 * One batch of events written as rows (`step_event_rows`), runs in `run_id` order from `after` (inclusive: a
 * batch may end inside a run, whose remaining events the next batch takes). Parameters: cutoff, statuses,
 * after, limit. Walks `runs_pkey`, each run's events by `step_events_pkey (run_id, id)`.
 */
async function deleteEventsBatch(
  db: SagaDb,
  cutoff: Date,
  statuses: readonly string[],
  after: string,
  limit: number,
): Promise<BatchResult> {
  const r = await sql<BatchResult>`
    WITH doomed AS (
      SELECT e.run_id, e.id FROM runs r JOIN step_event_rows e ON e.run_id = r.run_id
       WHERE r.run_id >= ${after}
         AND ${finalRunBefore(cutoff, statuses)}
         AND e.at < ${cutoff}
       ORDER BY r.run_id, e.id
       LIMIT ${limit}),
    gone AS (DELETE FROM step_event_rows e USING doomed d WHERE e.run_id = d.run_id AND e.id = d.id
             RETURNING e.run_id)
    SELECT count(*)::int AS n, max(run_id) AS last FROM gone`.execute(db);
  return r.rows[0]!;
}

/**
 * One batch of the standard events stored in `saga_log` rows (migration 0022, `steps/standard-events.ts`):
 * each stored event written before the cutoff, of a final run, is set to null (the row itself stays, see
 * above). Steps in `(run_id, step_idx)` order from the run `after` (inclusive, as above: a step already
 * cleared no longer matches), at most `limit` steps a statement; `n` counts the events cleared, at least one
 * a step, and the cursor is null once a batch found fewer steps than `limit`. Walks `runs_pkey`, each run's
 * steps by `saga_log_pkey`.
 */
async function clearStoredEventsBatch(
  db: SagaDb,
  cutoff: Date,
  statuses: readonly string[],
  after: string,
  limit: number,
): Promise<BatchResult> {
  const events = Object.entries(STANDARD_EVENT_COLUMNS);
  /** Whether the row holds event `e` (its columns, id first then time) written before the cutoff. */
  const old = ([, [, at]]: (typeof events)[number]) => sql`s.${sql.ref(at)} < ${cutoff}`;
  const r = await sql<BatchResult>`
    WITH doomed AS (
      SELECT s.run_id, s.step_idx, ${sql.join(events.map((e) => sql`${old(e)} AS ${sql.ref(`old_${e[0]}`)}`))}
        FROM runs r JOIN saga_log s ON s.run_id = r.run_id
       WHERE r.run_id >= ${after}
         AND ${finalRunBefore(cutoff, statuses)}
         AND (${sql.join(events.map(old), sql` OR `)})
       ORDER BY r.run_id, s.step_idx
       LIMIT ${limit}),
    gone AS (
      UPDATE saga_log s
         SET ${sql.join(
           events.flatMap(([name, columns]) =>
             columns.map(
               (c) =>
                 sql`${sql.ref(c)} = CASE WHEN d.${sql.ref(`old_${name}`)} THEN NULL ELSE s.${sql.ref(c)} END`,
             ),
           ),
         )}
        FROM doomed d
       WHERE s.run_id = d.run_id AND s.step_idx = d.step_idx
      RETURNING s.run_id,
                ${sql.join(
                  events.map(([name]) => sql`coalesce(d.${sql.ref(`old_${name}`)}, false)::int`),
                  sql` + `,
                )} AS cleared)
    SELECT coalesce(sum(cleared), 0)::int AS n,
           CASE WHEN count(*) >= ${limit} THEN max(run_id) END AS last
      FROM gone`.execute(db);
  return r.rows[0]!;
}

async function countOutbox(db: SagaDb, cutoff: Date, statuses: readonly string[]): Promise<number> {
  const r = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM outbox o JOIN runs r ON r.run_id = o.run_id
     WHERE o.published_at IS NOT NULL AND o.published_at < ${cutoff}
       AND ${finalRunBefore(cutoff, statuses)}`.execute(db);
  return r.rows[0]!.n;
}

async function countEvents(db: SagaDb, cutoff: Date, statuses: readonly string[]): Promise<number> {
  const r = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM runs r JOIN step_events e ON e.run_id = r.run_id
     WHERE ${finalRunBefore(cutoff, statuses)}
       AND e.at < ${cutoff}`.execute(db);
  return r.rows[0]!.n;
}
