import { sql } from 'kysely';
import { stepSettledChannel } from '../../db/channels.js';
import type { SagaDb } from '../../db/connect.js';
import { arrayLiteral, type ArrayElement } from '../../db/array-literal.js';
import { compiledStatement } from '../../db/compiled-statement.js';
import { preparedAs } from '../../db/prepared-statements.js';
import { setOutcomeEvent, TOOL_RETURNED_CAUSE } from '../standard-events.js';
import { stepChangesColumns, type StepChanges } from '../step-row-columns.js';
import { StepEventKind } from '../step-event-kind.js';
import { SETTLED_STEP_STATUSES, StepStatus } from '../step-status.js';
import { allowedSources } from '../step-transitions.js';
import type { StepOutcome } from './step-outcome.js';
import { NOTIFYING_STATUSES } from '../transition-step.js';

/** One attempt's outcome to record under its lease (see {@link recordOutcomeBatch}). */
export interface OutcomeRecord {
  readonly runId: string;
  readonly stepIdx: number;
  readonly outcome: StepOutcome;
  /** Milliseconds the tool took, for the event. */
  readonly durationMs?: number;
  /**
   * The outcome goes straight to a caller that is waiting for it (the API's inline executor, for the
   * request that wrote the step): a settled outcome is then marked delivered in this statement, as the
   * delivered mark would (see {@link recordOutcomeBatch}). The caller must
   * then answer with the returned row: it said it would by asking.
   */
  readonly deliver?: boolean;
}

/** The cause written on the executor's own outcome transition. */
export function executorCause(status: StepOutcome['status']): string {
  return status === StepStatus.CONFIRMED ? TOOL_RETURNED_CAUSE : 'executor: tool threw';
}

/** The event detail of an executor outcome: the duration, and the error for FAILED / UNKNOWN. */
export function outcomeDetail(o: OutcomeRecord): Record<string, unknown> {
  return {
    durationMs: o.durationMs,
    ...(o.outcome.status === StepStatus.CONFIRMED ? {} : o.outcome.error),
  };
}

/**
 * The grouped outcome's parameters: one array literal per column of `req`, in the order of the records, then
 * the lease owner and the NOTIFY channel.
 */
const OUTCOME_PARAMS = [
  'runId',
  'stepIdx',
  'toStatus',
  'fromStatus',
  'confirmed',
  'externalRef',
  'result',
  'error',
  'cause',
  'detail',
  'notify',
  'deliver',
  'leaseOwner',
  'channel',
] as const;
type OutcomeParams = Record<(typeof OUTCOME_PARAMS)[number], string>;

/** The grouped outcome's statement (see {@link recordOutcomeBatch}), compiled once (`compiledStatement`). */
const OUTCOME = compiledStatement<OutcomeParams, StepChanges>(
  OUTCOME_PARAMS,
  (p) =>
    sql<StepChanges>`${preparedAs('saga_record_outcome_batch')}
      WITH req AS (
        SELECT * FROM unnest(
          ${p.runId}::text[], ${p.stepIdx}::int[], ${p.toStatus}::text[],
          ${p.fromStatus}::text[],
          ${p.confirmed}::bool[],
          ${p.externalRef}::text[],
          ${p.result}::text[],
          ${p.error}::text[],
          ${p.cause}::text[],
          ${p.detail}::text[],
          ${p.notify}::bool[],
          ${p.deliver}::bool[]
        ) AS r(run_id, step_idx, to_status, from_status, confirmed, external_ref, result, error, cause, detail, notify,
               deliver)
      ), upd AS (
        UPDATE saga_log s
           SET status = req.to_status,
               external_ref = CASE WHEN req.confirmed THEN req.external_ref ELSE s.external_ref END,
               result = CASE WHEN req.confirmed THEN req.result::jsonb ELSE s.result END,
               error = req.error::jsonb,
               lease_until = NULL,
               lease_owner = NULL,
               updated_at = now(),
               ${setOutcomeEvent(sql`s.attempts = 1 AND req.from_status = ${StepStatus.INTENDED}`, {
                 to: sql`req.to_status`,
                 cause: sql`req.cause`,
                 detail: sql`req.detail::jsonb`,
               })},
               outcome_delivered = s.outcome_delivered OR req.deliver
          FROM req
         WHERE s.run_id = req.run_id AND s.step_idx = req.step_idx
           AND s.status = req.from_status
           AND s.lease_owner = ${p.leaseOwner}
        RETURNING ${stepChangesColumns('s')}, s.idempotency_key AS ev_key, s.trace_id AS ev_trace,
                  req.from_status, req.cause AS ev_cause, req.detail AS ev_detail, req.notify AS ev_notify
      ), ev AS (
        INSERT INTO step_event_rows (run_id, step_idx, kind, from_status, to_status, cause, detail, trace_id)
        SELECT run_id, step_idx, ${StepEventKind.TRANSITION}, from_status, status, ev_cause, ev_detail::jsonb,
               ev_trace
          FROM upd
         WHERE NOT (attempts = 1 AND from_status = ${StepStatus.INTENDED})
      )
      SELECT ${stepChangesColumns()} FROM upd
       WHERE CASE WHEN ev_notify THEN pg_notify(${p.channel}, ev_key) IS NOT NULL ELSE true END`,
);

/**
 * Records the outcomes of several attempts held by `leaseOwner` in ONE statement (one round trip, one
 * commit), each by compare-and-set `INTENDED → CONFIRMED | FAILED | UNKNOWN WHERE lease_owner = $owner`
 * with the lease cleared, its TRANSITION event, and the NOTIFY that wakes API requests waiting on it:
 *
 * ```sql
 * WITH req AS (SELECT * FROM unnest(…) AS r(run_id, step_idx, to_status, from_status, …)),
 *      upd AS (UPDATE saga_log s SET status = req.to_status, … FROM req
 *                     outcome_event_id = CASE WHEN attempts = 1 THEN nextval(…) ELSE … END, outcome_…
 *               WHERE <same row> AND s.status = req.from_status AND s.lease_owner = $owner
 *              RETURNING <the step's changing columns>, s.idempotency_key, s.trace_id, req.from_status),
 *      ev  AS (INSERT INTO step_event_rows … 'TRANSITION', from_status, status, trace_id … FROM upd
 *               WHERE NOT (attempts = 1 AND from_status = 'INTENDED'))
 * SELECT <the step's changing columns> FROM upd WHERE <pg_notify($channel, idempotency_key) where it notifies>;
 * ```
 *
 * The outcome of the step's first attempt (`attempts` = 1) is data of the row (the `outcome_…` columns,
 * `standard-events.ts`; at most once: only this statement writes it, under the lease that attempt's claim
 * took and this statement clears); the outcome of a later attempt is a row of `step_event_rows`, as
 * `recordOutcomeSlow` writes every outcome's.
 *
 * A record with `deliver` is also the delivered mark of its outcome when that is settled (CONFIRMED,
 * FAILED), as `markOutcomesDelivered` would write it: `outcome_delivered` is set with the status (the
 * run's cursor is computed from the marks, `runs/run-cursor.ts`; nothing of the run is written). One
 * statement then does what took two: no second version of the row, no second commit.
 *
 * The allowed sources of each row are {@link allowedSources} of its target narrowed to INTENDED, as in
 * `recordOutcome`: a single status, so a row the compare-and-set matched came from exactly that status and
 * the event's `from` needs no read of the row before the update (nor a row lock beyond the update's own).
 * Each step is held by one lease, so two groups never update the same row; a deadlock is not expected, and
 * would fail only this statement (the caller's group then records each outcome alone). The NOTIFY is
 * sent by the final SELECT's filter, inside a CASE (which Postgres evaluates lazily, unlike `OR`) so that
 * only a notifying status sends one, and it always passes (`pg_notify` returns a non-null void). Each row
 * comes back as the step's changes alone (`StepChanges`: its key and `STEP_CHANGING_COLUMNS`): the caller
 * holds the step it claimed, whose other columns its intake fixed, and makes the whole row with
 * `withChanges`, so the columns no outcome changes (the arguments, compensation, trace, payload hash…)
 * are neither sent nor parsed again. The NOTIFY is delivered only when the statement commits. A record
 * whose compare-and-set matched nothing is absent from the result (match rows to records by `run_id`,
 * `step_idx`) and nothing was written for it: the caller decides (late outcome, or dropped) on its slow
 * path, `recordOutcome`. The rule this form keeps with `recordOutcomeSlow`: README.md here.
 */
export async function recordOutcomeBatch(
  db: SagaDb,
  leaseOwner: string,
  records: readonly OutcomeRecord[],
  schema: string,
): Promise<readonly StepChanges[]> {
  if (records.length === 0) return [];
  // Each column one array parameter, as its literal text (`arrayLiteral`).
  const col = (f: (o: OutcomeRecord) => ArrayElement): string => arrayLiteral(records.map(f));
  const confirmed = (o: OutcomeRecord) => o.outcome.status === StepStatus.CONFIRMED;
  const r = await OUTCOME.execute(db, {
    runId: col((o) => o.runId),
    stepIdx: col((o) => o.stepIdx),
    toStatus: col((o) => o.outcome.status),
    fromStatus: col((o) => intendedSource(o.outcome.status)),
    confirmed: col((o) => confirmed(o)),
    externalRef: col((o) =>
      o.outcome.status === StepStatus.CONFIRMED ? o.outcome.effect.externalRef : null,
    ),
    result: col((o) =>
      o.outcome.status === StepStatus.CONFIRMED ? JSON.stringify(o.outcome.effect.result ?? null) : null,
    ),
    error: col((o) => (o.outcome.status === StepStatus.CONFIRMED ? null : JSON.stringify(o.outcome.error))),
    cause: col((o) => executorCause(o.outcome.status)),
    detail: col((o) => JSON.stringify(outcomeDetail(o))),
    notify: col((o) => NOTIFYING_STATUSES.has(o.outcome.status)),
    deliver: col((o) => o.deliver === true && SETTLED.has(o.outcome.status)),
    leaseOwner,
    channel: stepSettledChannel(schema),
  });
  return r.rows;
}

const SETTLED: ReadonlySet<string> = new Set(SETTLED_STEP_STATUSES);

/**
 * The one source the executor may record `to` from: the state machine's sources, narrowed to INTENDED
 * (the executor writes only under its own lease, on a step it claimed INTENDED).
 */
function intendedSource(to: StepOutcome['status']): StepStatus {
  const from = allowedSources(to).filter((s) => s === StepStatus.INTENDED);
  if (from.length !== 1)
    throw new Error(`the executor may not record ${to}: INTENDED → ${to} is not a transition`);
  return from[0]!;
}
