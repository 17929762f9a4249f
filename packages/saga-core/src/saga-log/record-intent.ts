import { sql } from 'kysely';
import { outboxChannel, type SagaTrx } from '../db/connect.js';
import type { StepRow, StoredCompensation } from '../db/schema.js';
import { StepEventKind, StepStatus, type ToolClass } from '../statuses.js';
import { appendStepEvent } from './append-event.js';

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
  readonly schema: string;
}

/**
 * Writes the intent of one step: the saga-log row, its first event and, for INTENDED, the outbox message
 * that will make an executor run it. Must run in the caller's transaction, so the row and the message
 * commit together or not at all: no row, no call.
 */
export async function recordIntent(trx: SagaTrx, i: IntentInput): Promise<StepRow> {
  const row = await trx
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
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await appendStepEvent(trx, {
    runId: i.runId,
    stepIdx: i.stepIdx,
    kind: StepEventKind.TRANSITION,
    from: null,
    to: i.status,
    cause: 'intake',
    detail: { args: i.args },
  });
  if (i.status === StepStatus.INTENDED) await enqueueExecution(trx, row, 1, i.schema);
  return row;
}

/**
 * Adds the outbox message that dispatches `row` to an executor. The job id is the key itself for the first
 * dispatch, so a relay that republishes after a crash adds nothing; a re-dispatch (after the reconciler
 * proved the first attempt never arrived) gets its own id.
 */
export async function enqueueExecution(
  trx: SagaTrx,
  row: StepRow,
  dispatchNo: number,
  schema: string,
): Promise<void> {
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
    })
    .execute();
  await sql`SELECT pg_notify(${outboxChannel(schema)}, '')`.execute(trx);
}
