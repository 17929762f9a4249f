import { sql } from 'kysely';
import {
  allowedRunSources,
  preparedAs,
  RUN_CHANGED_CHANNEL_SQL,
  RunStatus,
  StepEventKind,
  type RunRow,
  type SagaDb,
} from '@agent-saga/core';
import type { FinishStatus } from '../unwind/finish-run.js';

/** The terminal move of one unwound run with nothing else to write (no case, no correction). */
export interface RunClose {
  readonly runId: string;
  readonly to: FinishStatus;
  /** The full terminal reason, the requested reason included (`finishRun`'s). */
  readonly reason: string;
  /** The run's `status_reason` as the pass read it, from which `reason` was made. */
  readonly seenReason: string | null;
}

/**
 * Moves every run in `closes` from COMPENSATING to its terminal status in ONE statement (one round trip,
 * one commit), each by compare-and-set on the legal sources of its target (`RUN_TRANSITIONS`) narrowed to
 * COMPENSATING, and on the `status_reason` its terminal reason was made from, with its `run_transition`
 * event and the announcement of its id on `runChangedChannel`, as `transitionRun` writes them one run at a
 * time:
 *
 * ```sql
 * WITH req    AS (SELECT * FROM unnest(…) AS r(run_id, to_status, reason, seen_reason, from_status)),
 *      closed AS (UPDATE runs r SET status = req.to_status, status_reason = req.reason, updated_at = now()
 *                   FROM req WHERE r.run_id = req.run_id AND r.status = req.from_status -- 'COMPENSATING'
 *                    AND r.status_reason IS NOT DISTINCT FROM req.seen_reason RETURNING r.*),
 *      ev     AS (INSERT INTO step_event_rows … 'run_transition', 'COMPENSATING' → status, reason FROM closed)
 * SELECT closed.* FROM closed CROSS JOIN LATERAL (SELECT pg_notify(<run changed channel>, closed.run_id)) n;
 * ```
 *
 * COMPENSATING comes in as a column of `req`, not a literal: a literal matches the partial index
 * `runs_open`, which a planner without statistics then reads whole (every open run) for each statement;
 * compared with a column, the runs are found by their primary key.
 *
 * Only for a decision with no case and no correction to insert (`closesRunOnly`): those need their rows
 * in the same transaction, and go through `finishRun`. A close whose compare-and-set matched nothing is
 * absent from the result and nothing was written for it (the run is no longer COMPENSATING, or its reason
 * changed: the caller finishes it by `finishRun`, which names the status it found).
 */
export async function finishRunsBatch(db: SagaDb, closes: readonly RunClose[]): Promise<readonly RunRow[]> {
  if (closes.length === 0) return [];
  for (const c of closes)
    if (!allowedRunSources(c.to).includes(RunStatus.COMPENSATING))
      throw new Error(`an unwind cannot end ${c.to}: COMPENSATING → ${c.to} is not a transition`);
  // Sorted, so that two statements lock the runs they share in the same order.
  const cs = [...closes].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  const col = <T>(f: (x: RunClose) => T): T[] => cs.map(f);
  const r = await sql<RunRow>`${preparedAs('comp_finish_runs_batch')}
    WITH req AS (
      SELECT * FROM unnest(
        ${col((x) => x.runId)}::text[], ${col((x) => x.to)}::text[], ${col((x) => x.reason)}::text[],
        ${col((x) => x.seenReason)}::text[], ${col(() => RunStatus.COMPENSATING)}::text[]
      ) AS r(run_id, to_status, reason, seen_reason, from_status)
    ), closed AS (
      UPDATE runs r
         SET status = req.to_status, status_reason = req.reason, updated_at = now()
        FROM req
       WHERE r.run_id = req.run_id
         AND r.status = req.from_status
         AND r.status_reason IS NOT DISTINCT FROM req.seen_reason
      RETURNING r.*
    ), ev AS (
      INSERT INTO step_event_rows (run_id, step_idx, kind, from_status, to_status, cause, actor)
      SELECT run_id, NULL, ${StepEventKind.RUN_TRANSITION}, ${RunStatus.COMPENSATING}, status, status_reason, NULL
        FROM closed
    )
    SELECT closed.* FROM closed
      CROSS JOIN LATERAL (SELECT pg_notify(${sql.raw(RUN_CHANGED_CHANNEL_SQL)}, closed.run_id)) AS announced`.execute(
    db,
  );
  return r.rows;
}
