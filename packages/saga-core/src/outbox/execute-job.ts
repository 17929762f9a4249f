import { z } from 'zod';
import type { StepRow } from '../db/schema.js';
import { storedTrace, type StoredTraceColumns } from '../tracing/stored-trace.js';
import { formatTraceparent, type TraceContext } from '../tracing/trace-context.js';

/**
 * The execute job: the message that makes an executor run a step. Its one schema and its one builder live
 * here; every writer of an outbox row (the intake, a held step's release, a re-dispatch, a republish) and
 * every reader (the API's fast path, the relay, the executor) goes through them, so what the outbox holds
 * and what BullMQ carries cannot drift apart.
 *
 * The wire format is `{ runId, stepIdx, key, dispatchNo, traceparent? }`, in `outbox.payload` and in
 * BullMQ's `job.data`.
 * Jobs written by a running version must still parse after a deploy (they wait in Redis, and rows in the
 * outbox): a new field may only be optional, and no field may be renamed or dropped.
 */

/** The outbox topic of execute jobs (and the BullMQ job name they are added under). */
export const EXECUTE_TOPIC = 'execute';

/** `job.data` of an execute job, parsed (never cast) by the executor, the relay and the fast path. */
export const executeJobSchema = z.object({
  runId: z.string(),
  stepIdx: z.number().int().nonnegative(),
  /** The step's idempotency key: the executor claims the step by it. */
  key: z.string(),
  /** 1 for the intake's dispatch (or a held step's release); one more for each later dispatch. */
  dispatchNo: z.number().int().positive(),
  /**
   * The W3C `traceparent` of the span that dispatched the step (the intake's, for the first dispatch): the
   * executor's span is its child. Optional: jobs written before migration 0019 have none. Kept as the
   * string the header carries, not parsed here: the executor parses it (`parseTraceparent`), and a bad
   * value only starts a new trace. Why in the payload rather than a bytea column of the outbox: the payload
   * is the job, so what the outbox holds and what BullMQ carries stay one value; it costs ~73 bytes of WAL
   * per outbox row version (measured on PG 15; a 24-byte bytea column would cost ~24).
   */
  traceparent: z.string().max(64).optional(),
});
export type ExecuteJob = z.infer<typeof executeJobSchema>;

/** One dispatch of a step: the BullMQ job id and the job's data, as the outbox row holds them. */
export interface ExecuteDispatch {
  readonly jobId: string;
  readonly data: ExecuteJob;
}

/**
 * The BullMQ job id of a step's `dispatchNo`-th dispatch: the key itself for the first, so a relay that
 * publishes it again after a crash adds nothing; `<key>-d<n>` for a later one (a re-dispatch after the step
 * was proven never to have run, a republish after Redis lost the job), an id BullMQ has never seen.
 */
export function executeJobId(key: string, dispatchNo: number): string {
  return dispatchNo === 1 ? key : `${key}-d${dispatchNo}`;
}

/**
 * The `dispatchNo`-th dispatch of `step` (1: the intake's): its job id and data. The one builder of an
 * execute job, for the outbox row and for the API's fast path that publishes the same job at once. The
 * job's `traceparent` is `trace`, by default the step's stored context (its trace and intake span), so a
 * re-dispatch, a release after an approval or a republish stays in the step's trace.
 */
export function executeDispatch(
  step: Pick<StepRow, 'run_id' | 'step_idx' | 'idempotency_key'> & StoredTraceColumns,
  dispatchNo: number,
  trace: TraceContext | null = storedTrace(step),
): ExecuteDispatch {
  const data: ExecuteJob = {
    runId: step.run_id,
    stepIdx: step.step_idx,
    key: step.idempotency_key,
    dispatchNo,
  };
  return {
    jobId: executeJobId(step.idempotency_key, dispatchNo),
    data: trace ? { ...data, traceparent: formatTraceparent(trace) } : data,
  };
}
