import { sql } from 'kysely';
import type { SagaDb } from '../../db/connect.js';
import { arrayLiteral, type ArrayElement } from '../../db/array-literal.js';
import { compiledStatement } from '../../db/compiled-statement.js';
import { firstPerKey } from '../../db/statement-group.js';
import { preparedAs } from '../../db/prepared-statements.js';
import type { StepRow } from '../../db/schema.js';
import { RAISE_FLOORS_OF_GROUP } from '../../runs/run-cursor.js';
import { RunStatus } from '../../runs/run-status.js';
import {
  ATTEMPT_EVENT_COLUMNS,
  attemptEventValues,
  INTAKE_EVENT_COLUMNS,
  intakeEventValues,
} from '../standard-events.js';
import { StepStatus } from '../step-status.js';
import { stepSlot, stepSlotOf } from '../step-row-columns.js';
import { EXECUTE_TOPIC } from '../../outbox/execute-job.js';
import { sameOperation, type OperationSql } from './find-duplicate-operation.js';
import { claimLeaseMs, newIntentRow } from './new-intent-row.js';
import { firstDispatchOf, intentTrace } from './record-intent.js';
import type { NewIntent } from './new-intent.js';

/** The operation of the grouped statement's item `i`, from its columns. */
const ITEM_OPERATION: OperationSql = {
  tool: sql<string>`i.tool`,
  args: sql`i.args`,
  identity: sql`i.identity`,
};

/**
 * The grouped intake's parameters: one array literal per column of `i`, in the order of the items sent, then
 * the runs to lock and the relays' grace in seconds.
 */
const INTAKE_PARAMS = [
  'runId',
  'tenantId',
  'stepIdx',
  'tool',
  'toolClass',
  'toolVersion',
  'idempotencyKey',
  'args',
  'payloadHash',
  'compensation',
  'correction',
  'audience',
  'dependsOn',
  'jobId',
  'payload',
  'repeatable',
  'identity',
  'decision',
  'traceHex',
  'spanHex',
  'claimOwner',
  'claimMs',
  'claimCause',
  'runIds',
  'relayGraceSecs',
] as const;
type IntakeParams = Record<(typeof INTAKE_PARAMS)[number], string | number>;

/** What the grouped intake returns of each step it wrote: its key, and its statement's `now()`. */
type WrittenStep = Pick<StepRow, 'run_id' | 'step_idx' | 'created_at'>;

/** The grouped intake's statement (see {@link recordNewIntents}), compiled once (`compiledStatement`). */
const INTAKE = compiledStatement<IntakeParams, WrittenStep>(
  INTAKE_PARAMS,
  (p) =>
    sql<WrittenStep>`${preparedAs('saga_record_new_intents')}
      WITH i AS MATERIALIZED (
        SELECT * FROM unnest(${p.runId}::text[], ${p.tenantId}::text[],
                             ${p.stepIdx}::int[], ${p.tool}::text[],
                             ${p.toolClass}::text[], ${p.toolVersion}::int[],
                             ${p.idempotencyKey}::text[], ${p.args}::jsonb[],
                             ${p.payloadHash}::text[], ${p.compensation}::json[],
                             ${p.correction}::jsonb[], ${p.audience}::jsonb[],
                             ${p.dependsOn}::jsonb[],
                             ${p.jobId}::text[],
                             ${p.payload}::jsonb[],
                             ${p.repeatable}::bool[],
                             ${p.identity}::jsonb[],
                             ${p.decision}::jsonb[],
                             ${p.traceHex}::text[], ${p.spanHex}::text[],
                             ${p.claimOwner}::text[],
                             ${p.claimMs}::int[],
                             ${p.claimCause}::text[])
          AS i(run_id, tenant_id, step_idx, tool, tool_class, tool_version, idempotency_key, args, payload_hash,
               compensation, correction, audience, depends_on, job_id, payload, repeatable, identity, decision,
               trace_hex, span_hex, claim_owner, claim_ms, claim_cause)
      ),
      run AS MATERIALIZED (
        SELECT r.run_id, r.tenant_id, r.status, r.pivot_idx, r.governed, r.cursor_floor FROM runs r
         WHERE r.run_id = ANY(${p.runIds}::text[])
         ORDER BY r.run_id FOR UPDATE
      ),
      -- The duplicate check of every non-repeatable item, in one call after the runs are locked (the count).
      repeated AS MATERIALIZED (
        SELECT d.repeat_run_id AS run_id, d.repeat_step_idx AS step_idx
          FROM (SELECT array_agg(i.run_id) AS run_ids, array_agg(i.step_idx) AS step_idxs,
                       array_agg(i.tool) AS tools, array_agg(i.args) AS args, array_agg(i.identity) AS identities
                  FROM i WHERE NOT i.repeatable) o,
               saga_repeated_operations(o.run_ids, o.step_idxs, o.tools, o.args, o.identities,
                                        (SELECT count(*) FROM run)) d
         WHERE o.run_ids IS NOT NULL
      ),
      step AS (
        INSERT INTO saga_log (run_id, step_idx, tenant_id, tool, tool_class, tool_version, idempotency_key, args,
                              payload_hash, status, compensation, correction, audience, depends_on, trace_id, span_id,
                              lease_owner, lease_until, attempts, last_attempt_at, ${INTAKE_EVENT_COLUMNS},
                              ${ATTEMPT_EVENT_COLUMNS})
        SELECT i.run_id, i.step_idx, i.tenant_id, i.tool, i.tool_class, i.tool_version, i.idempotency_key, i.args,
               decode(i.payload_hash, 'hex'), ${StepStatus.INTENDED}, i.compensation, i.correction,
               ARRAY(SELECT jsonb_array_elements_text(i.audience)),
               CASE WHEN i.depends_on IS NOT NULL
                    THEN ARRAY(SELECT d::int FROM jsonb_array_elements_text(i.depends_on) AS d) END,
               decode(i.trace_hex, 'hex'), decode(i.span_hex, 'hex'),
               i.claim_owner,
               CASE WHEN i.claim_owner IS NOT NULL THEN now() + i.claim_ms * interval '1 millisecond' END,
               CASE WHEN i.claim_owner IS NOT NULL THEN 1 ELSE 0 END,
               CASE WHEN i.claim_owner IS NOT NULL THEN now() END,
               ${intakeEventValues(sql`${StepStatus.INTENDED}::text`, sql`i.decision`)},
               ${attemptEventValues(sql`i.claim_owner IS NOT NULL`, {
                 cause: sql`i.claim_cause`,
                 worker: sql`i.claim_owner`,
                 jobId: sql`i.job_id`,
                 key: sql`i.idempotency_key`,
               })}
          FROM i JOIN run ON run.run_id = i.run_id AND run.tenant_id = i.tenant_id
         WHERE run.status = ${RunStatus.RUNNING} AND run.pivot_idx IS NULL AND NOT run.governed
           AND NOT EXISTS (SELECT 1 FROM saga_log u
                            WHERE u.run_id = i.run_id AND u.step_idx < i.step_idx
                              AND u.status = ${StepStatus.UNKNOWN})
           AND (i.repeatable
                OR (NOT EXISTS (SELECT 1 FROM repeated d WHERE d.run_id = run.run_id AND d.step_idx = i.step_idx)
                    AND NOT EXISTS (SELECT 1 FROM i j
                                     WHERE j.run_id = run.run_id AND j.step_idx <> i.step_idx
                                       AND ${sameOperation('j', ITEM_OPERATION)})))
           AND NOT EXISTS (SELECT 1 FROM saga_log t WHERE t.run_id = i.run_id AND t.step_idx = i.step_idx)
         ORDER BY i.run_id, i.step_idx
        RETURNING run_id, step_idx, created_at
      ),
      floor AS (${RAISE_FLOORS_OF_GROUP}),
      ob AS (
        INSERT INTO outbox (topic, run_id, step_idx, idempotency_key, job_id, payload, relay_after)
        SELECT ${EXECUTE_TOPIC}, s.run_id, s.step_idx, i.idempotency_key, i.job_id, i.payload,
               now() + make_interval(secs => ${p.relayGraceSecs}::float8)
          FROM step s JOIN i ON i.run_id = s.run_id AND i.step_idx = s.step_idx
         WHERE i.claim_owner IS NULL
      )
      SELECT * FROM step`,
);

/**
 * The intake of several new steps (of one or many runs) as **one autocommit statement**: one round trip and
 * one commit for all of them (group commit), instead of the five round trips of the intake transaction
 * (BEGIN, lock, read, insert, COMMIT) for each. What it writes per step is exactly {@link recordIntent}'s:
 * the saga-log row, its first TRANSITION event and its outbox message, all or nothing (no row, no call).
 *
 * It is an optimistic compare-and-set: each step is written only if what the caller expected holds when
 * the statement runs, and otherwise nothing is written for it and its slot in the answer is `null`; the
 * caller then takes the ordinary intake transaction, which decides (a retry, a refusal, a conflict) with
 * the rules of step resolution. The expectations:
 * - the run exists in the caller's tenant, is RUNNING, has no pivot staged and is not `governed` (a run
 *   bound to a definition, with a plan, a budget or a money policy: its rules read the run's steps and
 *   may refuse or hold the call, which only the intake transaction does, see core's `bindCall`); the run row is locked
 *   (`FOR UPDATE`, in `run_id` order, so groups cannot deadlock with each other or with the grouped
 *   delivered marks), so an unwind or a pivot that commits first is seen (a locked row is returned in its
 *   newest version) and one that comes later waits for this commit, as with the intake transaction's
 *   `lockRun`. The runs are locked by primary key alone and their status, tenant and pivot checked after:
 *   a status condition in the locking scan would let the planner read every open run through `runs_open`
 *   instead (measured: 1,453 open runs read to lock 3);
 * - no step of the run below `stepIdx` is UNKNOWN (the status is bound, not spelled: as a literal it lets
 *   the planner use the partial index `saga_log_unsettled`, and on a large analysed log its generic plan
 *   then read that whole index for every item, without the run as a key; `grouped-statement-plans.test.ts`);
 * - no row is at `stepIdx`, as this statement's snapshot sees it (a plain INSERT, not `ON CONFLICT DO
 *   NOTHING`: the speculative insertion costs a WAL record per step, its HEAP_CONFIRM, and Postgres's work
 *   to make and confirm it). An intake of the same step that committed while this statement waited for the
 *   run lock is not in that snapshot: the primary key refuses the second row (23505), the whole statement
 *   writes nothing, and every item is answered null, so each takes the intake transaction, which reads the
 *   step under the run lock. That race needs a client's retry of a step racing its first call (a lost
 *   answer's re-issue, each in a different group), and costs that group one round trip;
 * - unless `operation` is null (a repeatable tool), no step of the run is a duplicate of it
 *   (the same tool and identity values, a status that may have taken effect), and no other
 *   item of this group for the same run is the same operation (both write nothing; the intake transaction
 *   then writes the first and refuses the second). Both compare with `run.run_id`, the locked run's id (the
 *   same value as `i.run_id`): the checks are then filters of the joined rows, which the generic plan of
 *   this prepared statement estimates at one per run, rather than of each of the 10 items it assumes for
 *   `unnest`. Written with `i.run_id`, the generic plan's cost rose from 62 to 153 (71 this way), so
 *   Postgres kept planning the statement anew for every group: 0.34 ms of planning each time instead of
 *   0.03 ms (a 20-step run). The earlier steps are read by `saga_repeated_operations` (migration 0026),
 *   a VOLATILE function called once for the whole group (the `repeated` CTE), so with a fresh snapshot:
 *   it is passed a count of the locked-runs CTE, so it runs after every run lock is held, and an intake
 *   of the same run that another statement committed while this one waited for a lock is seen, as in the
 *   intake transaction (see "Concurrent duplicates" in `find-duplicate-operation.ts`). The UNKNOWN check
 *   reads this statement's snapshot.
 *
 * The intake event, and with a `claim` the first ATTEMPT, are data of the row (the `intake_…` and
 * `attempt_…` columns; `standard-events.ts`), the intake event with the call's `decision` when it has one. Their
 * ids are taken as the rows they replace took theirs: the intake's, then the attempt's (the order of the
 * output columns), step after step in `(run_id, step_idx)` order (the `ORDER BY`: Postgres computes a
 * volatile output such as `nextval` after the sort). Each step is written with its item's trace context
 * (hex, decoded to the bytea columns; the job in the outbox row carries it as `traceparent`), which is
 * also its events' trace id.
 *
 * A run whose new step is `CURSOR_FLOOR_LAG` or more past its cursor's stored floor has the floor raised to
 * its cursor in the same statement (`RAISE_FLOORS_OF_GROUP`, `runs/run-cursor.ts`): at most once per that
 * many steps, so a caller that always names its steps keeps the cursor's computation short.
 *
 * Each step written is answered as the row the log holds, made from its item and the one value the statement
 * returns, its `created_at` (`newIntentRow`), not read back; a step not written is answered null.
 *
 * The relays are not notified: the caller publishes the jobs itself (the API's fast path) and the relays
 * leave the outbox rows alone for `relayGraceMs`; a step with a `claim` is written claimed, with no outbox
 * message (see `IntakeClaim`, `new-intent.ts`). The rule this form keeps with `recordIntent`: README.md here.
 */
export async function recordNewIntents(
  db: SagaDb,
  items: readonly NewIntent[],
  relayGraceMs: number,
): Promise<(StepRow | null)[]> {
  // Two items for one step in a group (a client's retry racing its first attempt): only the first is sent;
  // the other finds the step taken in the intake transaction, as a retry.
  const sent = [...firstPerKey(items, stepSlotOf).values()];
  if (sent.length === 0) return [];
  // Each column one array parameter, as its literal text (`arrayLiteral`).
  const col = (f: (i: NewIntent) => ArrayElement): string => arrayLiteral(sent.map(f));
  const traces = sent.map(intentTrace);
  const dispatches = sent.map((i, n) => firstDispatchOf(i, traces[n]!));
  const json = (v: unknown): string | null => (v === null ? null : JSON.stringify(v));
  // The JSON columns' text, bound as sent and parsed back for the rows answered (newIntentRow).
  const texts = sent.map((i) => ({
    args: JSON.stringify(i.args),
    compensation: json(i.compensation),
    correction: json(i.correction),
  }));
  const r = await INTAKE.execute(db, {
    runId: col((i) => i.runId),
    tenantId: col((i) => i.tenantId),
    stepIdx: col((i) => i.stepIdx),
    tool: col((i) => i.tool),
    toolClass: col((i) => i.toolClass),
    toolVersion: col((i) => i.toolVersion),
    idempotencyKey: col((i) => i.idempotencyKey),
    args: arrayLiteral(texts.map((t) => t.args)),
    payloadHash: col((i) => i.payloadHash),
    compensation: arrayLiteral(texts.map((t) => t.compensation)),
    correction: arrayLiteral(texts.map((t) => t.correction)),
    audience: col((i) => JSON.stringify(i.audience)),
    dependsOn: col((i) => json(i.dependsOn)),
    jobId: arrayLiteral(dispatches.map((d) => d.jobId)),
    // A claimed step gets no outbox message (see IntakeClaim): its job is not sent.
    payload: arrayLiteral(dispatches.map((d, n) => (sent[n]!.claim ? null : JSON.stringify(d.data)))),
    repeatable: col((i) => i.operation === null),
    identity: col((i) => json(i.operation?.identity ?? null)),
    decision: col((i) => json(i.decision ?? null)),
    traceHex: arrayLiteral(traces.map((t) => t.traceId)),
    spanHex: arrayLiteral(traces.map((t) => t.spanId)),
    claimOwner: col((i) => i.claim?.owner ?? null),
    claimMs: col((i) => (i.claim ? claimLeaseMs(i.claim) : null)),
    claimCause: col((i) => i.claim?.cause ?? null),
    runIds: arrayLiteral([...new Set(sent.map((i) => i.runId))]),
    relayGraceSecs: relayGraceMs / 1000,
  }).catch((err: unknown) => {
    if (isStepTaken(err)) return null;
    throw err;
  });
  // A step committed by another intake while this statement waited for its run: nothing was written.
  if (r === null) return items.map(() => null);
  const createdAt = new Map(r.rows.map((row) => [stepSlot(row.run_id, row.step_idx), row.created_at]));
  const rows = new Map<NewIntent, StepRow>();
  sent.forEach((i, n) => {
    const at = createdAt.get(stepSlotOf(i));
    if (at) rows.set(i, newIntentRow(i, traces[n]!, texts[n]!, at));
  });
  return items.map((i) => rows.get(i) ?? null);
}

/** The primary key of `saga_log` refused a row: another statement wrote that step first (see above). */
function isStepTaken(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && e.constraint === 'saga_log_pkey';
}
