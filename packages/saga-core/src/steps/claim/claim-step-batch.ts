import { sql, type RawBuilder } from 'kysely';
import type { SagaDb } from '../../db/connect.js';
import { preparedAs } from '../../db/prepared-statements.js';
import type { StepRow } from '../../db/schema.js';
import { EXECUTING_RUN_STATUSES } from '../../runs/run-status.js';
import { setAttemptEvent } from '../standard-events.js';
import { stepRowColumns } from '../step-row-columns.js';
import { StepEventKind } from '../step-event-kind.js';
import { StepStatus } from '../step-status.js';

/** The cause of the ATTEMPT event of an executor's claim (a step claimed at intake has the api's own). */
export const EXECUTOR_CLAIM_CAUSE = 'executor: claimed';
/** One delivered job asking to claim its step. */
export interface ClaimRequest {
  /** The step, by its primary key (the job carries both): the log has no index on the key (migration 0012). */
  readonly runId: string;
  readonly stepIdx: number;
  /** The step's idempotency key (the job carries it): a row at that index under another key is not it. */
  readonly key: string;
  /** The BullMQ job id that delivered the step; its outbox row is marked published with the claim. */
  readonly jobId: string;
}

/** Parameters shared by every claim of one statement. */
export interface ClaimBatchInput {
  /** Who holds the lease: one id per executor process. */
  readonly worker: string;
  /**
   * Lease length by tool name, in ms (the tool's timeout plus a margin); `defaultLeaseMs` for a tool not
   * listed. Passed as data because the job does not name the tool: the statement looks it up on the row.
   */
  readonly leaseMsByTool: ReadonlyMap<string, number>;
  readonly defaultLeaseMs: number;
}

/**
 * Claims every claimable step among `requests` in ONE statement (one round trip, one commit):
 *
 * ```sql
 * WITH req    AS (SELECT * FROM unnest($runIds, $stepIdxs, $keys, $jobIds) AS r(run_id, step_idx, key, job_id)),
 *      claimed AS (UPDATE saga_log SET lease_until = now() + <tool's lease>, lease_owner = $worker,
 *                         attempts = attempts + 1, last_attempt_at = now()
 *                         attempt_event_id = CASE WHEN attempts = 0 THEN nextval(…) ELSE … END, attempt_…
 *                   FROM req WHERE (run_id, step_idx) = (req.run_id, req.step_idx) AND idempotency_key = req.key
 *                    AND status = 'INTENDED' AND lease_until IS NULL
 *                    AND (SELECT status FROM runs WHERE run_id = saga_log.run_id) IN ('RUNNING', 'AWAITING_APPROVAL')
 *      ev     AS (INSERT INTO step_event_rows … 'ATTEMPT' …, trace_id FROM claimed WHERE attempts > 1),
 *      pub    AS (UPDATE outbox SET published_at = now() WHERE job_id = claimed's job AND published_at IS NULL)
 * SELECT * FROM claimed;
 * ```
 *
 * The compare-and-set is the same as {@link claimStep}'s (INTENDED with no lease, its run still going
 * forward: `EXECUTING_RUN_STATUSES`, read by the run's primary key in a scalar subquery, which the planner
 * cannot turn into a join that reads every open run through `runs_open`), the ATTEMPT event and the outbox mark
 * commit with it. The step's first attempt is data of the row (the `attempt_…` columns, `standard-events.ts`); a
 * later one is a row of `step_event_rows`, as `claimStepSlow` writes every attempt's. A step of a COMPENSATING or terminal run is not claimed here; the slow path withdraws it. A row another transaction is writing is waited for and checked again (the
 * compare-and-set holds on the row's newest version). Two executors' groups share a key only on a
 * duplicate delivery, so a deadlock between groups is not expected; it would fail only this statement
 * (the caller's group then claims each step alone). A key must appear once per call (the caller dedupes).
 *
 * Returns the claimed rows (match them to requests by `idempotency_key`); a request without a row here was
 * not claimed and nothing was written for it. The rule this form keeps with `claimStepSlow`: README.md here.
 *
 * The outbox message is found by its job id only: its "not yet published" test is spelled inside
 * `coalesce()`, which cannot match the predicate of the partial index `outbox_unpublished`. A bare
 * `published_at IS NULL` let the plan made once per connection on the group pool (`groupedStatements`)
 * read the message through that index, every unpublished message for each claim
 * (`grouped-statement-plans.test.ts`).
 */
export async function claimStepBatch(
  db: SagaDb,
  requests: readonly ClaimRequest[],
  b: ClaimBatchInput,
): Promise<readonly StepRow[]> {
  if (requests.length === 0) return [];
  const r = await sql<StepRow & { claim_job_id: string }>`${preparedAs('saga_claim_batch')}
    WITH req AS (
      SELECT * FROM unnest(${requests.map((q) => q.runId)}::text[], ${requests.map((q) => q.stepIdx)}::int[],
                           ${requests.map((q) => q.key)}::text[], ${requests.map((q) => q.jobId)}::text[])
        AS r(run_id, step_idx, key, job_id)
    ), claimed AS (
      UPDATE saga_log s
         SET lease_until = ${leaseUntil(b.leaseMsByTool, b.defaultLeaseMs)},
             lease_owner = ${b.worker},
             attempts = s.attempts + 1,
             last_attempt_at = now(),
             ${setAttemptEvent(sql`s.attempts = 0`, {
               cause: sql`${EXECUTOR_CLAIM_CAUSE}::text`,
               worker: sql`${b.worker}::text`,
               jobId: sql`req.job_id`,
               key: sql`s.idempotency_key`,
             })}
        FROM req
       WHERE s.run_id = req.run_id AND s.step_idx = req.step_idx AND s.idempotency_key = req.key
         AND s.status = ${StepStatus.INTENDED} AND s.lease_until IS NULL
         AND (SELECT r.status FROM runs r WHERE r.run_id = s.run_id)
             = ANY(${[...EXECUTING_RUN_STATUSES]}::text[])
      RETURNING ${stepRowColumns('s')}, req.job_id AS claim_job_id
    ), ev AS (
      INSERT INTO step_event_rows (run_id, step_idx, kind, cause, detail, trace_id)
      SELECT run_id, step_idx, ${StepEventKind.ATTEMPT}, ${EXECUTOR_CLAIM_CAUSE}::text,
             jsonb_build_object('attempt', attempts, 'worker', ${b.worker}::text, 'jobId', claim_job_id),
             trace_id
        FROM claimed
       WHERE attempts > 1
    ), pub AS (
      UPDATE outbox o SET published_at = now()
        FROM claimed c
       WHERE o.job_id = c.claim_job_id AND coalesce(o.published_at IS NULL, false)
    )
    SELECT * FROM claimed`.execute(db);
  return r.rows.map(({ claim_job_id: _jobId, ...row }) => row);
}

/**
 * `now()` plus the lease of the row's tool (`leaseMsByTool`, else `defaultLeaseMs`), as SQL over the
 * `saga_log` row being updated (its unqualified `tool` column).
 */
export function leaseUntil(
  leaseMsByTool: ReadonlyMap<string, number>,
  defaultLeaseMs: number,
): RawBuilder<Date> {
  const tools = [...leaseMsByTool.keys()];
  const secs = tools.map((t) => leaseMsByTool.get(t)! / 1000);
  return sql<Date>`now() + make_interval(secs => coalesce(
    (${secs}::float8[])[array_position(${tools}::text[], tool)], ${defaultLeaseMs / 1000}::float8))`;
}
