import { z } from 'zod';
import { sql } from 'kysely';
import type { SagaTrx } from '../../db/connect.js';
import { preparedAs } from '../../db/prepared-statements.js';
import type { StepRow, StoredCompensation } from '../../db/schema.js';
import { notifyRelays, relayAfter } from '../../outbox/enqueue-execution.js';
import { EXECUTE_TOPIC, executeDispatch, type ExecuteDispatch } from '../../outbox/execute-job.js';
import { intakeEventColumns } from '../standard-events.js';
import { StepStatus } from '../step-status.js';
import { type ToolClass } from '../../tools/tool-class.js';
import { traceColumns } from '../../tracing/stored-trace.js';
import { newTraceContext, type TraceContext } from '../../tracing/trace-context.js';

/**
 * The model's decision behind a call, as the agent backend reports it (`POST /v1/runs/{id}/calls`
 * `decision`): stored on the step's intake event and on each retry's RETRY_CALL event, in `detail.decision`,
 * so the journal says which model, prompt and turn asked for each attempt. Opaque strings, bounded by the
 * API; never read by the harness to decide anything.
 */
export interface CallDecision {
  readonly model?: string;
  readonly promptVersion?: string;
  readonly turnId?: string;
  readonly reasoningRef?: string;
}

/**
 * Why 200: a model id, a prompt version, a turn id or a pointer to stored reasoning fits easily; the
 * reasoning itself does not belong in the journal (it may hold personal data), only a reference to it.
 */
const DECISION_FIELD_MAX = 200;
const decisionField = z.string().min(1).max(DECISION_FIELD_MAX);

/** A call's `decision` as every intake form takes it (the API's body, the caller's transaction); strict. */
export const callDecisionSchema = z.strictObject({
  model: decisionField.optional().describe('The model that chose the call'),
  promptVersion: decisionField.optional().describe('The version of the prompt it ran under'),
  turnId: decisionField.optional().describe("The agent's turn that produced the call"),
  reasoningRef: decisionField
    .optional()
    .describe("A reference to the model's stored reasoning, not the text"),
});

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
  /** The model's decision behind the call, kept on the intake event (`detail.decision`); absent: none. */
  readonly decision?: CallDecision | null;
  /**
   * The trace context of the intake (its span): stored on the row and its events, and the outbox message's
   * `traceparent`. Absent: the step starts a trace of its own ({@link intentTrace}).
   */
  readonly trace?: TraceContext | null;
  /** INTENDED (dispatch now) or AWAITING_APPROVAL (held for a human; no outbox message). */
  readonly status: typeof StepStatus.INTENDED | typeof StepStatus.AWAITING_APPROVAL;
  /** The approval that holds this step (AWAITING_APPROVAL), written first in the same transaction. */
  readonly approvalId?: string | null;
  /** The definition step the call was matched to on a bound run (`bindCall`); null or absent otherwise. */
  readonly stepId?: string | null;
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
 * Writes the intent of one step: the saga-log row with its first event (the `intake_…` columns, NULL → status,
 * cause `intake`, detail `{args[, decision]}` as the journal shows it: `standard-events.ts`) and, for
 * INTENDED, the outbox message that will make an executor run it. Must run in the caller's transaction, so
 * the row and the message commit together or not at all: no row, no call.
 *
 * One statement (one round trip), with a data-modifying CTE that sees the inserted row:
 *
 * ```sql
 * WITH step AS (INSERT INTO saga_log (…, intake_event_id, …) VALUES (…, nextval(…), …) RETURNING *),
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
  const trace = intentTrace(i);
  const dispatch = firstDispatchOf(i, trace);
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
          payload_hash: Buffer.from(i.payloadHash, 'hex'),
          status: i.status,
          compensation: i.compensation ? JSON.stringify(i.compensation) : null,
          correction: i.correction ? JSON.stringify(i.correction) : null,
          audience: [...i.audience],
          depends_on: i.dependsOn ? [...i.dependsOn] : null,
          approval_id: i.approvalId ?? null,
          step_id: i.stepId ?? null,
          ...traceColumns(trace),
          ...intakeEventColumns(i.status, i.decision ?? null),
        })
        .returningAll(),
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
              sql<string>`${dispatch.jobId}::text`.as('job_id'),
              sql<string>`${JSON.stringify(dispatch.data)}::jsonb`.as('payload'),
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

/**
 * The intake's dispatch of the step `i` writes (dispatch 1: its job id is the key), carrying `trace` (the
 * intake span's context, {@link intentTrace}) as its `traceparent`.
 */
export function firstDispatchOf(
  i: Pick<IntentInput, 'runId' | 'stepIdx' | 'idempotencyKey'>,
  trace: TraceContext,
): ExecuteDispatch {
  return executeDispatch(
    { run_id: i.runId, step_idx: i.stepIdx, idempotency_key: i.idempotencyKey },
    1,
    trace,
  );
}

/** The trace context a new step is written with: the intake's, or a new trace's root when it has none. */
export function intentTrace(i: Pick<IntentInput, 'trace'>): TraceContext {
  return i.trace ?? newTraceContext();
}
