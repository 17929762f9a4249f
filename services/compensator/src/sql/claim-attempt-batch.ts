import { sql } from 'kysely';
import {
  mirrorCompensationStatus,
  preparedAs,
  allowedCompensationSources,
  CompensationStatus,
  StepEventKind,
  type CompensationRow,
  type SagaDb,
  type StepEventInput,
} from '@agent-saga/core';

/** The intent of one compensation attempt, from the row as one pass read it. */
export interface AttemptClaim {
  readonly runId: string;
  readonly stepIdx: number;
  /** The status the pass read (pending, unknown or failed). */
  readonly seenStatus: CompensationStatus;
  /** The attempt count the pass read: with the status, the row's version. */
  readonly seenAttempts: number;
  /** The lease: the tool's timeout plus the margin, from `now()` on the database's clock. */
  readonly leaseMs: number;
  /** The event's detail: the attempt number, the worker, the arguments sent, the unwind reason. */
  readonly detail: Record<string, unknown>;
  /**
   * The evidence the pass gathered before it decided to send (its lookups by the compensation key),
   * appended before the attempt's event, in the same commit; appended even when the compare-and-set loses.
   */
  readonly evidence: readonly StepEventInput[];
}

/** The cause written on an attempt's intent. */
export const ATTEMPT_CAUSE = 'compensator: attempt';

/**
 * Writes the intent of every attempt in `claims` (one per compensation) in ONE statement, before any of
 * them is sent: each compensation → running by compare-and-set on the status AND the attempt count its
 * pass read, narrowed to the legal sources of `running` (`COMPENSATION_TRANSITIONS`), with the attempt
 * counted, a lease on the database's clock held by `worker`, the mirror on `saga_log` and the event:
 *
 * ```sql
 * WITH req      AS (SELECT * FROM unnest(…) AS r(run_id, step_idx, seen_status, seen_attempts, lease_ms, detail)),
 *      evidence AS (SELECT * FROM unnest(…) AS e(run_id, step_idx, ord, kind, from_status, to_status, cause, detail)),
 *      claimed  AS (UPDATE compensations c SET status = 'running', attempts = attempts + 1,
 *                          lease_until = now() + lease_ms, lease_owner = $worker, last_attempt_at = now(), …
 *                     FROM req WHERE <same row> AND c.status = req.seen_status AND c.status = ANY($legal)
 *                      AND c.attempts = req.seen_attempts RETURNING c.*, req.seen_status, req.detail),
 *      mirror   AS (<mirrorCompensationStatus(claimed)>),
 *      ev       AS (INSERT INTO step_event_rows …
 *                   SELECT … FROM (evidence UNION ALL <seen_status → 'running', 'compensator: attempt'> FROM claimed)
 *                    ORDER BY run_id, step_idx, <evidence first, in order>)
 * SELECT * FROM claimed;
 * ```
 *
 * One INSERT, sorted, so that each step's evidence takes the event ids before its attempt's.
 *
 * The guard is `transitionCompensation`'s for the same move (a row the compare-and-set matched came from
 * exactly `seen_status`, so the event's `from` needs no read before the update). All or nothing: a crash
 * before the commit leaves every compensation as it was, and none was sent. A claim whose compare-and-set
 * matched nothing (another compensator moved the row) is absent from the result: its pass sends nothing.
 *
 * Prepared; planned on each execution all the same (`plan_cache_mode = force_custom_plan`, core's
 * `pgConnectionConfig`), so it follows `compensations` as the table grows.
 */
export async function claimAttemptBatch(
  db: SagaDb,
  worker: string,
  claims: readonly AttemptClaim[],
): Promise<readonly CompensationRow[]> {
  if (claims.length === 0) return [];
  // Sorted, so that two compensators' statements lock the rows they share in the same order.
  const c = [...claims].sort((a, b) =>
    a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : a.stepIdx - b.stepIdx,
  );
  const col = <T>(f: (x: AttemptClaim) => T): T[] => c.map(f);
  const evidence = c.flatMap((x) => x.evidence.map((e, ord) => ({ ...e, ord })));
  const ev = <T>(f: (e: (typeof evidence)[number]) => T): T[] => evidence.map(f);
  const r = await sql<
    CompensationRow & { seen_status: string; claim_detail: string }
  >`${preparedAs('comp_claim_attempt_batch')}
    WITH req AS (
      SELECT * FROM unnest(
        ${col((x) => x.runId)}::text[], ${col((x) => x.stepIdx)}::int[], ${col((x) => x.seenStatus)}::text[],
        ${col((x) => x.seenAttempts)}::int[], ${col((x) => x.leaseMs / 1000)}::float8[],
        ${col((x) => JSON.stringify(x.detail))}::text[]
      ) AS r(run_id, step_idx, seen_status, seen_attempts, lease_secs, detail)
    ), evidence AS (
      SELECT * FROM unnest(
        ${ev((e) => e.runId)}::text[], ${ev((e) => e.stepIdx)}::int[], ${ev((e) => e.ord)}::int[],
        ${ev((e) => e.kind)}::text[], ${ev((e) => e.from ?? null)}::text[], ${ev((e) => e.to ?? null)}::text[],
        ${ev((e) => e.cause)}::text[], ${ev((e) => (e.detail == null ? null : JSON.stringify(e.detail)))}::text[],
        ${ev((e) => e.actor ?? null)}::text[]
      ) AS e(run_id, step_idx, ord, kind, from_status, to_status, cause, detail, actor)
    ), claimed AS (
      UPDATE compensations c
         SET status = ${CompensationStatus.RUNNING},
             attempts = c.attempts + 1,
             lease_until = now() + make_interval(secs => req.lease_secs),
             lease_owner = ${worker},
             last_attempt_at = now(),
             next_attempt_at = NULL,
             updated_at = now()
        FROM req
       WHERE c.run_id = req.run_id AND c.step_idx = req.step_idx
         AND c.status = req.seen_status
         AND c.status = ANY(${[...allowedCompensationSources(CompensationStatus.RUNNING)]}::text[])
         AND c.attempts = req.seen_attempts
      RETURNING c.*, req.seen_status, req.detail AS claim_detail
    ), mirror AS (
      ${mirrorCompensationStatus(sql.table('claimed'))}
    ), ev AS (
      INSERT INTO step_event_rows (run_id, step_idx, kind, from_status, to_status, cause, detail, actor)
      SELECT run_id, step_idx, kind, from_status, to_status, cause, detail::jsonb, actor
        FROM (SELECT run_id, step_idx, 0 AS grp, ord, kind, from_status, to_status, cause, detail, actor
                FROM evidence
              UNION ALL
              SELECT run_id, step_idx, 1, 0, ${StepEventKind.COMPENSATION}, seen_status, status, ${ATTEMPT_CAUSE},
                     claim_detail, NULL
                FROM claimed) x
       ORDER BY run_id, step_idx, grp, ord
    )
    SELECT * FROM claimed`.execute(db);
  return r.rows.map(({ seen_status: _s, claim_detail: _d, ...row }) => row);
}
