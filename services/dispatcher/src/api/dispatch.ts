import type { Queue } from 'bullmq';
import { withinMs, type Logger, type SagaTrx, type StepRow } from '@agent-saga/core';
import { executeJobSchema, publishExecute, type ExecuteJob } from '../queue/execute-queue.js';

/** A committed outbox message that the fast path may publish at once. */
export interface Dispatch {
  readonly jobId: string;
  readonly data: ExecuteJob;
}

/**
 * The latest outbox message of a step, read in the transaction that wrote it, so the fast path publishes
 * exactly what the relay would (same job id, same data).
 */
export async function readDispatch(trx: SagaTrx, key: string): Promise<Dispatch> {
  const msg = await trx
    .selectFrom('outbox')
    .select(['job_id', 'payload'])
    .where('idempotency_key', '=', key)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return { jobId: msg.job_id, data: executeJobSchema.parse(msg.payload) };
}

/**
 * The first dispatch of a step just recorded by `recordIntent`: the same job id (the key) and data the
 * outbox row holds, built from the row instead of read back.
 */
export function firstDispatch(row: Pick<StepRow, 'run_id' | 'step_idx' | 'idempotency_key'>): Dispatch {
  return {
    jobId: row.idempotency_key,
    data: { runId: row.run_id, stepIdx: row.step_idx, key: row.idempotency_key, dispatchNo: 1 },
  };
}

/**
 * The fast path: adds the job right after the commit instead of waiting for the relay. Best effort and
 * bounded: a failure, or no answer within `timeoutMs` (Redis down or not yet reconnected), is logged and
 * left to the relay, which sweeps every outbox row the fast path missed (the outbox, not this call, is the
 * source of truth). The job id makes a later relay publish of the same row a no-op, and an add that lands
 * after the bound is a no-op for the relay's in turn. The outbox row is not marked here; the executor's
 * claim marks it published.
 */
export async function publishFast(
  queue: Queue<ExecuteJob>,
  d: Dispatch,
  log: Logger,
  timeoutMs: number,
): Promise<void> {
  try {
    await withinMs(publishExecute(queue, d.jobId, d.data), timeoutMs, 'fast-path publish');
  } catch (err) {
    // The step's fields are named here rather than bound in a child logger: the child would be built for
    // every call and used only on this rare path.
    log.warn(
      { err, jobId: d.jobId, runId: d.data.runId, stepIdx: d.data.stepIdx, key: d.data.key },
      'fast-path publish failed; the outbox relay will publish the step',
    );
  }
}
