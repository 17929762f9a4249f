import { sql, type RawBuilder } from 'kysely';
import type { StoredEventColumn } from '../db/schema.js';
import { StepStatus } from './step-status.js';

/**
 * The standard events of a call, stored as data of its `saga_log` row (migration 0022) rather than as rows of
 * `step_event_rows`. Every reader reads the journal through the view `step_events`, which is the table's rows
 * UNION ALL these events rebuilt from each row, with the same ids, kinds, statuses, causes, details, times,
 * actor (null) and trace id as the rows they replace.
 *
 * Which events are stored how:
 * - the intake TRANSITION (NULL → INTENDED | AWAITING_APPROVAL, cause `intake`): always in the `intake_…`
 *   columns, written by both intake forms (`recordIntent`, `recordNewIntents`). Its `detail.args` is the
 *   row's `args` column (not stored twice); `detail.decision` is stored when the call had one;
 * - the first ATTEMPT (the claim that takes `attempts` from 0 to 1: at intake, `IntakeClaim`, or by the
 *   executor's grouped claim, `claimStepBatch`): in the `attempt_…` columns. A later attempt is a row;
 * - the outcome TRANSITION, from INTENDED, the executor's grouped statement (`recordOutcomeBatch`) records
 *   for the first attempt (`attempts` = 1): in the `outcome_…` columns. A later attempt's outcome is a row.
 *
 * Everything else stays a row: lookups, retry calls, compensations, run transitions, decisions, a second
 * attempt and its outcome, every later change of status (the reconciler's, the compensator's, a person's),
 * and the events of the slow forms (`claimStepSlow`, `recordOutcomeSlow`), which decide the exceptions. Each
 * column is written at most once, so it never has to hold two events: `attempts` only grows, the first
 * attempt is made once, and its outcome is recorded by the grouped statement at most once, under the lease
 * that attempt's claim took and the outcome clears.
 *
 * Each event takes its id from `step_events_id_seq` when it is written (a row's default), so ids order the
 * journal as before and paging by id still works; its time is `clock_timestamp()` then (a row's default).
 * The usual values ({@link USUAL_EVENT_VALUES}) are stored as null and given back by the view (migration
 * 0023: every byte of the row goes to the WAL with each version that leaves its page). The columns, and
 * what the view adds to them: migrations 0022 and 0023. This module is the one place that writes them;
 * retention (`prune-log.ts`) is the one place that clears them.
 */

/** The cause of the ATTEMPT event of a step claimed at intake (the API's inline executor). */
export const INTAKE_CLAIM_CAUSE = 'api: claimed at intake';

/** The cause of the executor's outcome TRANSITION when the tool returned an effect. */
export const TOOL_RETURNED_CAUSE = 'executor: tool returned';

/**
 * The values a stored event usually has, written as null and given back by the view `step_events`
 * (migration 0023 spells the same values in its `coalesce`s; the outcome's `{}` detail too).
 */
export const USUAL_EVENT_VALUES = {
  intakeTo: StepStatus.INTENDED,
  attemptCause: INTAKE_CLAIM_CAUSE,
  outcomeTo: StepStatus.CONFIRMED,
  outcomeCause: TOOL_RETURNED_CAUSE,
} as const satisfies Record<string, string>;

/** `value` (SQL text), or null when it is `usual`. */
function unlessUsual(value: RawBuilder<string>, usual: string): RawBuilder<string | null> {
  return sql<string | null>`nullif(${value}, ${sql.lit(usual)})`;
}

/**
 * Every column of `saga_log` that holds a standard event, by event (migration 0022): its id first, then its
 * time, then what the view needs besides the row's own columns. Retention clears them by this list.
 */
export const STANDARD_EVENT_COLUMNS = {
  outcome: ['outcome_event_id', 'outcome_event_at', 'outcome_to', 'outcome_cause', 'outcome_detail'],
  attempt: ['attempt_event_id', 'attempt_event_at', 'attempt_cause', 'attempt_worker', 'attempt_job_id'],
  intake: ['intake_event_id', 'intake_event_at', 'intake_to', 'intake_decision'],
} as const satisfies Record<string, readonly StoredEventColumn[]>;

/** A compile-time check that {@link STANDARD_EVENT_COLUMNS} lists every `StoredEventColumn`. */
type UnlistedEventColumn = Exclude<
  StoredEventColumn,
  (typeof STANDARD_EVENT_COLUMNS)[keyof typeof STANDARD_EVENT_COLUMNS][number]
>;
export const STANDARD_EVENT_COLUMNS_COMPLETE: [UnlistedEventColumn] extends [never]
  ? true
  : UnlistedEventColumn = true;

/** The next event id, as a row of `step_event_rows` takes it (its column default). */
const NEXT_EVENT_ID = sql<string>`nextval('step_events_id_seq')`;

/** The intake event's columns, for an INSERT's column list; {@link intakeEventValues} are their values. */
export const INTAKE_EVENT_COLUMNS = sql.raw(STANDARD_EVENT_COLUMNS.intake.join(', '));

/**
 * The values of {@link INTAKE_EVENT_COLUMNS}: a new id, now (`clock_timestamp()`), the row's first status
 * `to` and the call's `decision` (SQL: text, and jsonb or null).
 */
export function intakeEventValues(
  to: RawBuilder<string>,
  decision: RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`${NEXT_EVENT_ID}, clock_timestamp(), ${unlessUsual(to, USUAL_EVENT_VALUES.intakeTo)}, ${decision}`;
}

/**
 * The intake event's columns as values of a query builder's insert (`recordIntent`): the same as
 * {@link intakeEventValues}, with the status and the decision given as values.
 */
export function intakeEventColumns(
  to: StepStatus,
  decision: object | null,
): {
  readonly intake_event_id: RawBuilder<string>;
  readonly intake_event_at: RawBuilder<Date>;
  readonly intake_to: StepStatus | null;
  readonly intake_decision: string | null;
} {
  return {
    intake_event_id: NEXT_EVENT_ID,
    intake_event_at: sql<Date>`clock_timestamp()`,
    intake_to: to === USUAL_EVENT_VALUES.intakeTo ? null : to,
    intake_decision: decision === null ? null : JSON.stringify(decision),
  };
}

/** The first attempt's columns, for an INSERT's column list; {@link attemptEventValues} are their values. */
export const ATTEMPT_EVENT_COLUMNS = sql.raw(STANDARD_EVENT_COLUMNS.attempt.join(', '));

/**
 * The values of {@link ATTEMPT_EVENT_COLUMNS} when `made` (SQL boolean; all null otherwise): a new id, now,
 * the claim's `cause`, its `worker` and the `jobId` that delivered it, stored null when it is the step's
 * `key` (a first dispatch's job id is the key; the view gives the key back).
 */
export function attemptEventValues(made: RawBuilder<boolean>, a: AttemptEventSql): RawBuilder<unknown> {
  return sql`CASE WHEN ${made} THEN ${NEXT_EVENT_ID} END, CASE WHEN ${made} THEN clock_timestamp() END,
             CASE WHEN ${made} THEN ${unlessUsual(a.cause, USUAL_EVENT_VALUES.attemptCause)} END,
             CASE WHEN ${made} THEN ${a.worker} END,
             CASE WHEN ${made} THEN nullif(${a.jobId}, ${a.key}) END`;
}

/**
 * The SET list of an UPDATE of `saga_log s` that writes the first attempt when `made` (SQL boolean, over
 * the row's old version) and leaves the columns as they are otherwise.
 */
export function setAttemptEvent(made: RawBuilder<boolean>, a: AttemptEventSql): RawBuilder<unknown> {
  return sql`attempt_event_id = CASE WHEN ${made} THEN ${NEXT_EVENT_ID} ELSE s.attempt_event_id END,
             attempt_event_at = CASE WHEN ${made} THEN clock_timestamp() ELSE s.attempt_event_at END,
             attempt_cause = CASE WHEN ${made} THEN ${unlessUsual(a.cause, USUAL_EVENT_VALUES.attemptCause)}
                                  ELSE s.attempt_cause END,
             attempt_worker = CASE WHEN ${made} THEN ${a.worker} ELSE s.attempt_worker END,
             attempt_job_id = CASE WHEN ${made} THEN nullif(${a.jobId}, ${a.key}) ELSE s.attempt_job_id END`;
}

/** The first attempt's values, as SQL text: who claimed (`cause`, `worker`) by which job, of which step key. */
export interface AttemptEventSql {
  readonly cause: RawBuilder<string>;
  readonly worker: RawBuilder<string>;
  readonly jobId: RawBuilder<string>;
  readonly key: RawBuilder<string>;
}

/**
 * The SET list of an UPDATE of `saga_log s` that writes the outcome of the first attempt, from INTENDED,
 * when `made` (SQL boolean, over the row's old version): a new id, now, the status `to`, the `cause` and the
 * `detail` (SQL text, text, jsonb); the columns are left as they are otherwise.
 */
export function setOutcomeEvent(
  made: RawBuilder<boolean>,
  o: {
    readonly to: RawBuilder<string>;
    readonly cause: RawBuilder<string>;
    readonly detail: RawBuilder<unknown>;
  },
): RawBuilder<unknown> {
  return sql`outcome_event_id = CASE WHEN ${made} THEN ${NEXT_EVENT_ID} ELSE s.outcome_event_id END,
             outcome_event_at = CASE WHEN ${made} THEN clock_timestamp() ELSE s.outcome_event_at END,
             outcome_to = CASE WHEN ${made} THEN ${unlessUsual(o.to, USUAL_EVENT_VALUES.outcomeTo)}
                               ELSE s.outcome_to END,
             outcome_cause = CASE WHEN ${made} THEN ${unlessUsual(o.cause, USUAL_EVENT_VALUES.outcomeCause)}
                                  ELSE s.outcome_cause END,
             outcome_detail = CASE WHEN ${made} THEN nullif(${o.detail}, '{}'::jsonb) ELSE s.outcome_detail END`;
}
