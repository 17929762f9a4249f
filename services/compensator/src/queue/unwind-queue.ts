import { createHash } from 'node:crypto';
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';

/** The BullMQ queue compensators drain: one job per run being unwound. */
export const UNWIND_QUEUE = 'saga-unwind';

/** `job.data` of an unwind job, parsed (never cast) by the worker. */
export const unwindJobSchema = z.object({ runId: z.string().min(1) });
export type UnwindJob = z.infer<typeof unwindJobSchema>;

/**
 * The job id of a run's unwind: derived from the run id, so every sweep and every NOTIFY that adds the
 * run while a job for it waits or runs adds nothing. Hashed because run ids may hold `:`, which BullMQ
 * refuses in custom ids.
 */
export function unwindJobId(runId: string): string {
  return `unwind-${createHash('sha256').update(runId).digest('hex').slice(0, 32)}`;
}

/**
 * No BullMQ retries (the saga log, not the job, holds the progress: the sweep re-adds an unfinished run),
 * and finished jobs are removed so the same id can be added again.
 */
export const UNWIND_JOB_OPTIONS: JobsOptions = { attempts: 1, removeOnComplete: true, removeOnFail: true };

export function createUnwindQueue(connection: ConnectionOptions, prefix: string): Queue<UnwindJob> {
  return new Queue<UnwindJob>(UNWIND_QUEUE, { connection, prefix, defaultJobOptions: UNWIND_JOB_OPTIONS });
}

/** Adds the unwind job of `runId` (a no-op while one waits or runs). */
export async function enqueueUnwind(queue: Queue<UnwindJob>, runId: string): Promise<void> {
  await queue.add('unwind', { runId }, { jobId: unwindJobId(runId) });
}

/**
 * Adds the unwind jobs of `runIds` in one round trip to Redis (BullMQ `addBulk`); each is a no-op while a
 * job for its run waits or runs, as with {@link enqueueUnwind}.
 */
export async function enqueueUnwinds(queue: Queue<UnwindJob>, runIds: readonly string[]): Promise<void> {
  if (runIds.length === 0) return;
  await queue.addBulk(
    runIds.map((runId) => ({ name: 'unwind', data: { runId }, opts: { jobId: unwindJobId(runId) } })),
  );
}
