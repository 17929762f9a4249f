import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';

/** The BullMQ queue on which executors take steps. */
export const EXECUTE_QUEUE = 'saga-execute';

/** `job.data` of an execute job, parsed (never cast) by the executor. */
export const executeJobSchema = z.object({
  runId: z.string(),
  stepIdx: z.number().int().nonnegative(),
  key: z.string(),
  dispatchNo: z.number().int().positive(),
});
export type ExecuteJob = z.infer<typeof executeJobSchema>;

/**
 * Job options: BullMQ never retries by itself (an unknown outcome is the reconciler's to resolve, never a
 * blind retry), and finished jobs are dropped (the saga log, not Redis, keeps the history).
 */
export const EXECUTE_JOB_OPTIONS: JobsOptions = {
  attempts: 1,
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3600 },
};

export function createExecuteQueue(connection: ConnectionOptions, prefix: string): Queue<ExecuteJob> {
  return new Queue<ExecuteJob>(EXECUTE_QUEUE, { connection, prefix, defaultJobOptions: EXECUTE_JOB_OPTIONS });
}

/** Adds one execute job; `jobId` makes a repeated add of the same dispatch a no-op. */
export async function publishExecute(
  queue: Queue<ExecuteJob>,
  jobId: string,
  data: ExecuteJob,
): Promise<void> {
  await queue.add('execute', data, { jobId });
}
