import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';

/** The BullMQ queue of the reconciler pool: scheduled sweeps and scans, and requests for one step. */
export const RECONCILE_QUEUE = 'saga-reconcile';

/**
 * `job.data` of a reconcile job, parsed (never cast) by the worker.
 * - `sweep`: claim and reconcile every due unsettled step (from the job scheduler);
 * - `scan`: look for stuck runs and stale outbox messages, and log them (from the job scheduler);
 * - `step`: reconcile the step with this key now, if it is due (from {@link enqueueReconcile}).
 */
export const reconcileJobSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('sweep') }),
  z.object({ kind: z.literal('scan') }),
  z.object({ kind: z.literal('step'), key: z.string().min(1) }),
]);
export type ReconcileJob = z.infer<typeof reconcileJobSchema>;

/**
 * Never retried by BullMQ (the next sweep is the retry) and dropped when done: the saga log keeps the
 * history. Failed jobs are dropped too, so a failed request never blocks the same `jobId` later.
 */
export const RECONCILE_JOB_OPTIONS: JobsOptions = { attempts: 1, removeOnComplete: true, removeOnFail: true };

/** Ids of the two job schedulers; every reconciler process upserts the same ones, so there is one of each. */
export const SWEEP_SCHEDULER_ID = 'reconcile-sweep';
export const SCAN_SCHEDULER_ID = 'reconcile-scan';

export function createReconcileQueue(connection: ConnectionOptions, prefix: string): Queue<ReconcileJob> {
  return new Queue<ReconcileJob>(RECONCILE_QUEUE, {
    connection,
    prefix,
    defaultJobOptions: RECONCILE_JOB_OPTIONS,
  });
}

/** The job id of a request to reconcile the step under `key` (BullMQ refuses ':' in custom ids). */
export function reconcileJobId(key: string): string {
  if (key.includes(':')) throw new RangeError(`idempotency key ${JSON.stringify(key)} contains ':'`);
  return `reconcile-${key}`;
}

/**
 * Asks the reconciler pool to reconcile one step (the dispatcher after an UNKNOWN, the compensator before
 * it unwinds). The job id is derived from the key, so a request repeated while one is waiting is a no-op.
 * A step that is not due (settled, leased by another reconciler, or in backoff) is left to the sweeps.
 */
export async function enqueueReconcile(queue: Queue<ReconcileJob>, key: string): Promise<void> {
  await queue.add('step', { kind: 'step', key }, { jobId: reconcileJobId(key) });
}

/**
 * Creates or updates the sweep and scan schedulers (idempotent: every process calls it at start, and again
 * whenever Redis comes back without them: see `keepReconcileSchedulers`). BullMQ
 * adds the next job of a scheduler when the current one is taken, so a slow sweep does not pile jobs up;
 * a sweep that outlasts the interval lets the next one run beside it, on another worker or process.
 */
export async function upsertReconcileSchedulers(
  queue: Queue<ReconcileJob>,
  every: { readonly sweepMs: number; readonly scanMs: number },
): Promise<void> {
  await queue.upsertJobScheduler(
    SWEEP_SCHEDULER_ID,
    { every: every.sweepMs },
    { name: 'sweep', data: { kind: 'sweep' }, opts: RECONCILE_JOB_OPTIONS },
  );
  await queue.upsertJobScheduler(
    SCAN_SCHEDULER_ID,
    { every: every.scanMs },
    { name: 'scan', data: { kind: 'scan' }, opts: RECONCILE_JOB_OPTIONS },
  );
}
