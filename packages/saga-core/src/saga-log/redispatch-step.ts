import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import type { StepRow } from '../db/schema.js';
import { StepStatus } from '../statuses.js';
import { enqueueExecution } from './record-intent.js';
import { transitionStep } from './transition-step.js';

export interface RedispatchInput {
  readonly runId: string;
  readonly stepIdx: number;
  /** Why the step is sent again: `inline lookup: not found`, `reconciler: proved absent`, … */
  readonly cause: string;
  readonly detail?: Record<string, unknown>;
  readonly schema: string;
  /** Whether to NOTIFY the outbox relays (default true; false when the caller publishes the job itself). */
  readonly notifyRelay?: boolean;
  /** The caller publishes the job itself: the relays leave it alone this long (see `recordIntent`). */
  readonly relayGraceMs?: number;
}

export interface Redispatch {
  readonly row: StepRow;
  /** 2 for the first re-dispatch (the intake's dispatch is 1). */
  readonly dispatchNo: number;
  /** The BullMQ job id of the new outbox message (distinct from every earlier dispatch of the step). */
  readonly jobId: string;
}

/**
 * Sends a NOT_EXECUTED step again: NOT_EXECUTED → INTENDED by compare-and-set with the lease cleared, plus a
 * new outbox message with the next dispatch number, in the caller's transaction. The step keeps its key and
 * its stored arguments: a re-dispatch never sends anything a model wrote after the intent.
 *
 * Parameters: `runId`, `stepIdx` name the step; `schema` names the NOTIFY channel of the outbox.
 * @throws InvalidTransitionError when the step is not NOT_EXECUTED (someone else re-dispatched it first).
 */
export async function redispatchStep(trx: SagaTrx, r: RedispatchInput): Promise<Redispatch> {
  const row = await transitionStep(trx, {
    runId: r.runId,
    stepIdx: r.stepIdx,
    to: StepStatus.INTENDED,
    onlyFrom: [StepStatus.NOT_EXECUTED],
    cause: r.cause,
    ...(r.detail ? { detail: r.detail } : {}),
    patch: { lease_until: null, lease_owner: null },
    schema: r.schema,
  });
  // Dispatch numbers are counted from the step's own outbox messages; the step row is locked by the
  // transition above, so two re-dispatches of one step cannot pick the same number.
  const prev = await sql<{ n: number }>`
    SELECT coalesce(max((payload->>'dispatchNo')::int), 0)::int AS n
      FROM outbox WHERE idempotency_key = ${row.idempotency_key}`.execute(trx);
  const dispatchNo = (prev.rows[0]?.n ?? 0) + 1;
  await enqueueExecution(trx, row, dispatchNo, r.schema, r.notifyRelay ?? true, r.relayGraceMs ?? 0);
  const msg = await trx
    .selectFrom('outbox')
    .select('job_id')
    .where('idempotency_key', '=', row.idempotency_key)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return { row, dispatchNo, jobId: msg.job_id };
}
