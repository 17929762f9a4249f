import { sql } from 'kysely';
import { outboxChannel, type SagaTrx } from '../db/connect.js';
import { preparedAs } from '../db/prepared-statements.js';
import type { StepRow, StoredCompensation } from '../db/schema.js';
import { StepEventKind, StepStatus, type ToolClass } from '../statuses.js';

/** The BullMQ topic on which executors take steps to run. */
export const EXECUTE_TOPIC = 'execute';

export interface IntentInput {
  readonly runId: string;
  readonly stepIdx: number;
  readonly tenantId: string;
  readonly tool: string;
  readonly toolClass: ToolClass;
  readonly toolVersion: number;
  readonly idempotencyKey: string;
  readonly args: Record<string, unknown>;
  readonly payloadHash: string;
  readonly compensation: StoredCompensation | null;
  readonly correction: Record<string, unknown> | null;
  readonly audience: readonly string[];
  readonly dependsOn: readonly number[] | null;
  /** INTENDED (dispatch now) or AWAITING_APPROVAL (held for a human; no outbox message). */
  readonly status: typeof StepStatus.INTENDED | typeof StepStatus.AWAITING_APPROVAL;
  /** The approval that holds this step (AWAITING_APPROVAL), written first in the same transaction. */
  readonly approvalId?: string | null;
  readonly schema: string;
  /** Whether to NOTIFY the outbox relays (default true); see {@link recordIntent}. */
  readonly notifyRelay?: boolean;
  /**
   * The caller publishes the job itself (the API's fast path): the relays leave the row alone for this
   * long (`outbox.relay_after`). Default 0: the row is the relays' at once.
   */
  readonly relayGraceMs?: number;
}

/**
 * Writes the intent of one step: the saga-log row, its first event and, for INTENDED, the outbox message
 * that will make an executor run it. Must run in the caller's transaction, so the row and the message
 * commit together or not at all: no row, no call.
 *
 * One statement (one round trip), with data-modifying CTEs that all see the inserted row:
 *
 * ```sql
 * WITH step AS (INSERT INTO saga_log (…) VALUES (…) RETURNING *),
 *      ev   AS (INSERT INTO step_events … SELECT …, NULL, status, 'intake', $detail FROM step),
 *      ob   AS (INSERT INTO outbox … SELECT … FROM step WHERE status = 'INTENDED')
 * SELECT * FROM step;
 * ```
 *
 * The relays' NOTIFY is sent only with `notifyRelay` (the default): with the API's fast path on, the API
 * publishes the job itself and the relay only sweeps rows older than its grace, which its poll finds, so a
 * NOTIFY would only serialise this commit with every other notifying commit (PG 15 holds a database-wide
 * lock from a notifying transaction's pre-commit through its flush).
 */
export async function recordIntent(trx: SagaTrx, i: IntentInput): Promise<StepRow> {
  const dispatched = i.status === StepStatus.INTENDED;
  const row = await trx
    .with('step', (db) =>
      db
        .insertInto('saga_log')
        .values({
          run_id: i.runId,
          step_idx: i.stepIdx,
          tenant_id: i.tenantId,
          tool: i.tool,
          tool_class: i.toolClass,
          tool_version: i.toolVersion,
          idempotency_key: i.idempotencyKey,
          args: JSON.stringify(i.args),
          payload_hash: i.payloadHash,
          status: i.status,
          compensation: i.compensation ? JSON.stringify(i.compensation) : null,
          correction: i.correction ? JSON.stringify(i.correction) : null,
          audience: [...i.audience],
          depends_on: i.dependsOn ? [...i.dependsOn] : null,
          approval_id: i.approvalId ?? null,
        })
        .returningAll(),
    )
    .with('ev', (db) =>
      db
        .insertInto('step_events')
        .columns(['run_id', 'step_idx', 'kind', 'from_status', 'to_status', 'cause', 'detail'])
        .expression((eb) =>
          eb
            .selectFrom('step')
            .select([
              'run_id',
              'step_idx',
              sql<StepEventKind>`${StepEventKind.TRANSITION}::text`.as('kind'),
              sql<string | null>`NULL::text`.as('from_status'),
              'status',
              sql<string>`'intake'::text`.as('cause'),
              sql<string>`${JSON.stringify({ args: i.args })}::jsonb`.as('detail'),
            ]),
        ),
    )
    .with('ob', (db) =>
      db
        .insertInto('outbox')
        .columns(['topic', 'run_id', 'step_idx', 'idempotency_key', 'job_id', 'payload', 'relay_after'])
        .expression((eb) =>
          eb
            .selectFrom('step')
            .select([
              sql<string>`${EXECUTE_TOPIC}::text`.as('topic'),
              'run_id',
              'step_idx',
              'idempotency_key',
              'idempotency_key as job_id',
              sql<string>`${JSON.stringify(firstDispatchPayload(i))}::jsonb`.as('payload'),
              relayAfter(i.relayGraceMs ?? 0).as('relay_after'),
            ])
            .where('status', '=', StepStatus.INTENDED),
        ),
    )
    .selectFrom('step')
    .selectAll()
    .modifyEnd(preparedAs('saga_record_intent'))
    .executeTakeFirstOrThrow();
  if (dispatched && (i.notifyRelay ?? true)) await notifyRelays(trx, i.schema);
  return row;
}

/** The execute job of a step's first dispatch (its job id is the key itself). */
export function firstDispatchPayload(
  i: Pick<IntentInput, 'runId' | 'stepIdx' | 'idempotencyKey'>,
): Record<string, unknown> {
  return { runId: i.runId, stepIdx: i.stepIdx, key: i.idempotencyKey, dispatchNo: 1 };
}

/** `now()` plus the grace a self-publishing caller keeps the row for (a bound parameter, same SQL text). */
function relayAfter(graceMs: number) {
  return sql<Date>`now() + make_interval(secs => ${graceMs / 1000}::float8)`;
}

/** Wakes the outbox relays (delivered at commit). */
async function notifyRelays(trx: SagaTrx, schema: string): Promise<void> {
  await sql`SELECT pg_notify(${outboxChannel(schema)}, '')`.execute(trx);
}

/**
 * Adds the outbox message that dispatches `row` to an executor, and returns its BullMQ job id. The job id
 * is the key itself for the first dispatch, so a relay that republishes after a crash adds nothing; a
 * re-dispatch (after the reconciler proved the first attempt never arrived) or a republish (after Redis
 * lost the job) gets its own id (see `enqueueNextDispatch`).
 */
export async function enqueueExecution(
  trx: SagaTrx,
  row: StepRow,
  dispatchNo: number,
  schema: string,
  notifyRelay = true,
  relayGraceMs = 0,
): Promise<string> {
  const jobId = dispatchNo === 1 ? row.idempotency_key : `${row.idempotency_key}-d${dispatchNo}`;
  await trx
    .insertInto('outbox')
    .values({
      topic: EXECUTE_TOPIC,
      run_id: row.run_id,
      step_idx: row.step_idx,
      idempotency_key: row.idempotency_key,
      job_id: jobId,
      payload: JSON.stringify({
        runId: row.run_id,
        stepIdx: row.step_idx,
        key: row.idempotency_key,
        dispatchNo,
      }),
      relay_after: relayAfter(relayGraceMs),
    })
    .execute();
  if (notifyRelay) await notifyRelays(trx, schema);
  return jobId;
}
