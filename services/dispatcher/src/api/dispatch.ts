import type { Queue } from 'bullmq';
import { withinMs, type ExecuteDispatch, type ExecuteJob, type Logger } from '@agent-saga/core';
import { publishExecute } from '../queue/execute-queue.js';

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
