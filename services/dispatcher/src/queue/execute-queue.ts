import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { EXECUTE_TOPIC, type ExecuteJob } from '@agent-saga/core';

/** The BullMQ queue on which executors take steps (its jobs: core's `ExecuteJob`, `executeJobSchema`). */
export const EXECUTE_QUEUE = 'saga-execute';

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
  await queue.add(EXECUTE_TOPIC, data, { jobId });
}
