import { sql } from 'kysely';
import {
  mirrorCompensationStatus,
  preparedAs,
  allowedCompensationSources,
  CompensationStatus,
  StepEventKind,
  type CompensationRow,
  type SagaDb,
  type StoredToolError,
} from '@agent-saga/core';

/** What one attempt of a compensation came to, as its lease holder records it. */
export type AttemptOutcome =
  | {
      /** The tool returned: the compensation took effect. */
      readonly to: typeof CompensationStatus.COMPENSATED;
      readonly externalRef: string | null;
      readonly result: unknown;
    }
  | {
      /** The system said no. `retryInMs` null: the budget is spent, `reason` says so (a person decides). */
      readonly to: typeof CompensationStatus.FAILED;
      readonly error: StoredToolError;
      readonly retryInMs: number | null;
      readonly reason: string | null;
    }
  | {
      /** Anything else: it may have taken effect; looked up by key from `now() + retryInMs`. */
      readonly to: typeof CompensationStatus.UNKNOWN;
      readonly error: StoredToolError;
      readonly retryInMs: number;
    };

/** One attempt's outcome, with its event. */
export interface AttemptOutcomeRecord {
  readonly runId: string;
  readonly stepIdx: number;
  readonly outcome: AttemptOutcome;
  readonly cause: string;
  readonly detail: Record<string, unknown>;
}

/**
 * Records the outcomes of attempts held by `leaseOwner` in ONE statement (one round trip, one commit),
 * each by compare-and-set `running → compensated | failed | unknown WHERE lease_owner = $owner` (the
 * legal sources of each target narrowed to `running`), with the lease cleared, the mirror on `saga_log`
 * and the event:
 *
 * ```sql
 * WITH req AS (SELECT * FROM unnest(…) AS r(run_id, step_idx, to_status, external_ref, result, error,
 *                                          retry_secs, sets_reason, reason, cause, detail)),
 *      upd AS (UPDATE compensations c SET status = req.to_status, lease_until = NULL, lease_owner = NULL,
 *                     <compensated: external_ref, result; failed / unknown: error, next_attempt_at;
 *                      failed: reason> FROM req
 *               WHERE <same row> AND c.status = 'running' AND c.lease_owner = $owner RETURNING …),
 *      mirror AS (<mirrorCompensationStatus(upd)>),
 *      ev  AS (INSERT INTO step_event_rows … 'running' → status, cause, detail FROM upd)
 * SELECT * FROM upd;
 * ```
 *
 * The columns each outcome sets are those one attempt's `recordAttemptOutcome` asks for. Each attempt is held
 * by one lease, so two statements never update the same row; a record whose compare-and-set matched
 * nothing (the lease ran out and another compensator expired it) is absent from the result and nothing
 * was written for it.
 *
 * Prepared; planned on each execution all the same (`plan_cache_mode = force_custom_plan`, core's
 * `pgConnectionConfig`), so it follows `compensations` as the table grows.
 */
export async function recordAttemptOutcomeBatch(
  db: SagaDb,
  leaseOwner: string,
  records: readonly AttemptOutcomeRecord[],
): Promise<readonly CompensationRow[]> {
  if (records.length === 0) return [];
  for (const r of records)
    if (!allowedCompensationSources(r.outcome.to).includes(CompensationStatus.RUNNING))
      throw new Error(
        `an attempt cannot record ${r.outcome.to}: running → ${r.outcome.to} is not a transition`,
      );
  const rs = [...records].sort((a, b) =>
    a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : a.stepIdx - b.stepIdx,
  );
  const col = <T>(f: (x: AttemptOutcomeRecord) => T): T[] => rs.map(f);
  const o = (x: AttemptOutcomeRecord) => x.outcome;
  const r = await sql<
    CompensationRow & { ev_cause: string; ev_detail: string }
  >`${preparedAs('comp_record_attempt_outcome_batch')}
    WITH req AS (
      SELECT * FROM unnest(
        ${col((x) => x.runId)}::text[], ${col((x) => x.stepIdx)}::int[], ${col((x) => o(x).to)}::text[],
        ${col((x) => {
          const v = o(x);
          return v.to === CompensationStatus.COMPENSATED ? v.externalRef : null;
        })}::text[],
        ${col((x) => {
          const v = o(x);
          return v.to === CompensationStatus.COMPENSATED ? JSON.stringify(v.result ?? null) : null;
        })}::text[],
        ${col((x) => {
          const v = o(x);
          return v.to === CompensationStatus.COMPENSATED ? null : JSON.stringify(v.error);
        })}::text[],
        ${col((x) => {
          const v = o(x);
          return v.to === CompensationStatus.COMPENSATED || v.retryInMs === null ? null : v.retryInMs / 1000;
        })}::float8[],
        ${col((x) => {
          const v = o(x);
          return v.to === CompensationStatus.FAILED ? v.reason : null;
        })}::text[],
        ${col((x) => x.cause)}::text[], ${col((x) => JSON.stringify(x.detail))}::text[]
      ) AS r(run_id, step_idx, to_status, external_ref, result, error, retry_secs, reason, cause, detail)
    ), upd AS (
      UPDATE compensations c
         SET status = req.to_status,
             lease_until = NULL,
             lease_owner = NULL,
             updated_at = now(),
             external_ref = CASE WHEN req.to_status = ${CompensationStatus.COMPENSATED}
                                 THEN req.external_ref ELSE c.external_ref END,
             result = CASE WHEN req.to_status = ${CompensationStatus.COMPENSATED}
                           THEN req.result::jsonb ELSE c.result END,
             error = CASE WHEN req.to_status = ${CompensationStatus.COMPENSATED}
                          THEN c.error ELSE req.error::jsonb END,
             next_attempt_at = CASE WHEN req.to_status = ${CompensationStatus.COMPENSATED} THEN c.next_attempt_at
                                    WHEN req.retry_secs IS NULL THEN NULL
                                    ELSE now() + make_interval(secs => req.retry_secs) END,
             reason = CASE WHEN req.to_status = ${CompensationStatus.FAILED} THEN req.reason ELSE c.reason END
        FROM req
       WHERE c.run_id = req.run_id AND c.step_idx = req.step_idx
         AND c.status = ${CompensationStatus.RUNNING}
         AND c.lease_owner = ${leaseOwner}
      RETURNING c.*, req.cause AS ev_cause, req.detail AS ev_detail
    ), mirror AS (
      ${mirrorCompensationStatus(sql.table('upd'))}
    ), ev AS (
      INSERT INTO step_event_rows (run_id, step_idx, kind, from_status, to_status, cause, detail)
      SELECT run_id, step_idx, ${StepEventKind.COMPENSATION}, ${CompensationStatus.RUNNING}, status, ev_cause,
             ev_detail::jsonb
        FROM upd
    )
    SELECT * FROM upd`.execute(db);
  return r.rows.map(({ ev_cause: _c, ev_detail: _d, ...row }) => row);
}
