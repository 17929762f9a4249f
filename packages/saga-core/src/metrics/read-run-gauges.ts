import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import { OPEN_RUN_STATUSES, RunStatus } from '../runs/run-status.js';
import { valuesOf } from '../util/values-of.js';
import { literals } from './sql-literals.js';

/** Every run of the log, by status. */
export interface RunTotals {
  /** Runs by status; every status is present (0 when none). */
  readonly byStatus: ReadonlyMap<RunStatus, number>;
  /** Sum of `runs.irreversible_before_pivot`: irreversible steps released before any pivot, ever. */
  readonly irreversibleBeforePivot: number;
}

/**
 * Every run by status, and the irreversible steps released before a pivot, from `run_status_counts`
 * (migration 0008): per status and shard, the count and sum that triggers on `runs` keep in the transaction
 * that creates, moves or deletes a run. The read sums at most 16 rows per status, whatever the number of
 * runs, where a `GROUP BY status` over `runs` read every run ever made. Terminal counts only grow, so
 * `increase(saga_runs{status="COMPENSATED"}[1h])` is the rate of runs ending so, across every process.
 */
export async function readRunTotals(db: SagaDb): Promise<RunTotals> {
  const r = await sql<{ status: RunStatus; n: number; irreversible: number }>`
    SELECT status, sum(runs)::float8 AS n, sum(irreversible_before_pivot)::float8 AS irreversible
      FROM run_status_counts
     GROUP BY status`.execute(db);
  const byStatus = new Map<RunStatus, number>(valuesOf(RunStatus).map((s) => [s, 0]));
  let irreversibleBeforePivot = 0;
  for (const row of r.rows) {
    byStatus.set(row.status, row.n);
    irreversibleBeforePivot += row.irreversible;
  }
  return { byStatus, irreversibleBeforePivot };
}

/** The open runs of one status, and how long the longest-idle of them has not changed. */
export interface OpenRunAge {
  /** Open runs with no change for longer than the threshold. */
  readonly stuck: number;
  /** Seconds since the least recently changed open run of this status last changed (0 when none). */
  readonly oldestIdleSeconds: number;
}

/**
 * Open runs by status: how many have not changed for `stuckRunMs` (an agent gone silent, an unwind that
 * stopped, a pivot nobody decides), and the idle time of the longest-idle one. Reads through the partial
 * index `runs_open` (the status list is spelled as literals so the planner can prove the predicate), so the
 * cost follows the open runs, not the log's size.
 */
export async function readOpenRunAges(
  db: SagaDb,
  stuckRunMs: number,
): Promise<ReadonlyMap<RunStatus, OpenRunAge>> {
  const r = await sql<{ status: RunStatus; stuck: number; oldest: number | null }>`
    SELECT status,
           count(*) FILTER (WHERE updated_at < now() - make_interval(secs => ${stuckRunMs / 1000}))::float8
             AS stuck,
           extract(epoch FROM now() - min(updated_at))::float8 AS oldest
      FROM runs
     WHERE status IN (${literals(OPEN_RUN_STATUSES)})
     GROUP BY status`.execute(db);
  const ages = new Map<RunStatus, OpenRunAge>(
    OPEN_RUN_STATUSES.map((s) => [s, { stuck: 0, oldestIdleSeconds: 0 }]),
  );
  for (const row of r.rows)
    ages.set(row.status, { stuck: row.stuck, oldestIdleSeconds: Math.max(0, row.oldest ?? 0) });
  return ages;
}
