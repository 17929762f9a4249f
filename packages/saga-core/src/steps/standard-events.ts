import { sql, type RawBuilder } from 'kysely';

/**
 * The standard events of a call, stored as data of its `saga_log` row (migration 0022) rather than as rows of
 * `step_event_rows`. Every reader reads the journal through the view `step_events`, which is the table's rows
 * UNION ALL these events rebuilt from each row, with the same ids, kinds, statuses, causes, details, times,
 * actor (null) and trace id as the rows they replace.
 *
 * Which events are stored how:
 * - the intake TRANSITION (NULL → INTENDED | AWAITING_APPROVAL, cause `intake`): always in `intake_event`,
 *   written by both intake forms (`recordIntent`, `recordNewIntents`). Its `detail.args` is the row's `args`
 *   column (not stored twice); `detail.decision` is stored when the call had one;
 * - the first ATTEMPT (the claim that takes `attempts` from 0 to 1: at intake, `IntakeClaim`, or by the
 *   executor's grouped claim, `claimStepBatch`): in `attempt_event`. A later attempt is a row;
 * - the outcome TRANSITION the executor's grouped statement (`recordOutcomeBatch`) records for the first
 *   attempt (`attempts` = 1): in `outcome_event`. The outcome of a later attempt is a row.
 *
 * Everything else stays a row: lookups, retry calls, compensations, run transitions, decisions, a second
 * attempt and its outcome, every later change of status (the reconciler's, the compensator's, a person's),
 * and the events of the slow forms (`claimStepSlow`, `recordOutcomeSlow`), which decide the exceptions. Each
 * column is written at most once, so it never has to hold two events: `attempts` only grows, the first
 * attempt is made once, and its outcome is recorded by the grouped statement at most once, under the lease
 * that attempt's claim took and the outcome clears.
 *
 * Each event takes its id from `step_events_id_seq` when it is written (a row's default), so ids order the
 * journal as before and paging by id still works; `at` is `clock_timestamp()` then (a row's default).
 */

/**
 * The stored intake event: `{id, at, to}`, and `detail: {decision}` when `decision` (SQL, jsonb or null) is
 * not null. `to` is the row's first status (SQL, text).
 */
export function storedIntakeEvent(to: RawBuilder<string>, decision: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`jsonb_build_object('id', nextval('step_events_id_seq'), 'at', clock_timestamp(), 'to', ${to})
    || CASE WHEN ${decision} IS NULL THEN '{}'::jsonb
            ELSE jsonb_build_object('detail', jsonb_build_object('decision', ${decision})) END`;
}

/**
 * The stored first ATTEMPT: `{id, at, cause, detail: {attempt: 1, worker, jobId}}` (SQL text values), the
 * detail an executor's claim writes.
 */
export function storedAttemptEvent(
  cause: RawBuilder<string>,
  worker: RawBuilder<string>,
  jobId: RawBuilder<string>,
): RawBuilder<string> {
  return sql<string>`jsonb_build_object('id', nextval('step_events_id_seq'), 'at', clock_timestamp(),
    'cause', ${cause}, 'detail', jsonb_build_object('attempt', 1, 'worker', ${worker}, 'jobId', ${jobId}))`;
}

/** The stored outcome TRANSITION of the first attempt: `{id, at, from, to, cause, detail}` (SQL values). */
export function storedOutcomeEvent(
  from: RawBuilder<string>,
  to: RawBuilder<string>,
  cause: RawBuilder<string>,
  detail: RawBuilder<unknown>,
): RawBuilder<string> {
  return sql<string>`jsonb_build_object('id', nextval('step_events_id_seq'), 'at', clock_timestamp(),
    'from', ${from}, 'to', ${to}, 'cause', ${cause}, 'detail', ${detail})`;
}
