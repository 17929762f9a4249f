import type { Queue } from 'bullmq';
import {
  executeJobSchema,
  withinMs,
  type ExecuteDispatch,
  type ExecuteJob,
  type Logger,
  type SagaTrx,
} from '@agent-saga/core';
import { publishExecute } from '../queue/execute-queue.js';

/**
 * The latest outbox message of a step, read in the transaction that wrote it, so the fast path publishes
 * exactly what the relay would (same job id, same data). A step's first dispatch, just written by the
 * intake, is built instead of read back (core's `executeDispatch(row, 1)`, the builder the intake used).
 */
export async function readDispatch(trx: SagaTrx, key: string): Promise<ExecuteDispatch> {
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
 * The fast path: adds the job right after the commit instead of waiting for the relay. Best effort and
 * bounded: a failure, or no answer within `timeoutMs` (Redis down or not yet reconnected), is logged and
 * left to the relay, which sweeps every outbox row the fast path missed (the outbox, not this call, is the
 * source of truth). The job id makes a later relay publish of the same row a no-op, and an add that lands
 * after the bound is a no-op for the relay's in turn. The outbox row is not marked here; the executor's
 * claim marks it published.
 */
export async function publishFast(
  queue: Queue<ExecuteJob>,
  d: ExecuteDispatch,
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
