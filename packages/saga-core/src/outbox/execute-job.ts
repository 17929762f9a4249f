import { z } from 'zod';
import type { StepRow } from '../db/schema.js';

/**
 * The execute job: the message that makes an executor run a step. Its one schema and its one builder live
 * here; every writer of an outbox row (the intake, a held step's release, a re-dispatch, a republish) and
 * every reader (the API's fast path, the relay, the executor) goes through them, so what the outbox holds
 * and what BullMQ carries cannot drift apart.
 *
 * The wire format is `{ runId, stepIdx, key, dispatchNo }`, in `outbox.payload` and in BullMQ's `job.data`.
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
 * execute job, for the outbox row and for the API's fast path that publishes the same job at once.
 */
export function executeDispatch(
  step: Pick<StepRow, 'run_id' | 'step_idx' | 'idempotency_key'>,
  dispatchNo: number,
): ExecuteDispatch {
  return {
    jobId: executeJobId(step.idempotency_key, dispatchNo),
    data: { runId: step.run_id, stepIdx: step.step_idx, key: step.idempotency_key, dispatchNo },
  };
}
