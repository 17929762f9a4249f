import { UnrecoverableError, Worker, type ConnectionOptions, type Job, type Queue } from 'bullmq';
import {
  closeWorkerWithin,
  createRunningWork,
  newWorkerId,
  listenChannel,
  OutcomeUnknownError,
  RunStatus,
  unwindChannel,
  type ChannelListener,
  type DbOptions,
  type SagaDb,
} from '@agent-saga/core';
import {
  enqueueUnwind,
  enqueueUnwinds,
  UNWIND_QUEUE,
  unwindJobSchema,
  type UnwindJob,
} from '../queue/unwind-queue.js';
import { driveRun, type DriveResult } from '../unwind/drive-run.js';
import type { UnwindDeps } from '../unwind/unwind-deps.js';
import { createUnwindGroups } from '../unwind/unwind-groups.js';

export interface CompensatorWorker {
  readonly workerId: string;
  /** Starts the sweep, the LISTEN and the BullMQ worker. */
  start(): Promise<void>;
  /**
   * Drains: no new run is taken; running compensations finish, or after `drainMs` are aborted (unknown).
   * BullMQ's bookkeeping in Redis after them is bounded (`closeWorkerWithin`), so the drain ends even
   * while Redis is unreachable.
   */
  close(drainMs: number): Promise<void>;
  /** Aborts the running compensations now (a second SIGTERM). */
  abortRunning(): void;
}

export type CompensatorWorkerDeps = Omit<UnwindDeps, 'workerId' | 'shutdownSignal' | 'groups'> & {
  readonly connection: ConnectionOptions;
  readonly queue: Queue<UnwindJob>;
  /** Connection settings of the LISTEN connection (its own, outside the pool). */
  readonly listenDb: DbOptions;
  /**
   * The pool the grouped statements go through (`RoleContext.groupDb`: plans made once per connection);
   * absent: `db`.
   */
  readonly groupDb?: SagaDb;
};

/**
 * Runs one sweep adds at most. Why 1,000: one statement and one Redis round trip of a few milliseconds;
 * when more are open, the next sweep starts as soon as the workers have taken these (`drained`), so a
 * backlog is swept in pages without waiting for COMPENSATOR_SWEEP_MS.
 */
const SWEEP_BATCH = 1_000;

/**
 * The compensator pool of one process. Where unwinds come from: the run's status is the durable request
 * (COMPENSATING, written by the API's compare-and-set), so nothing can be lost between the API's commit and
 * this queue. A NOTIFY on `unwindChannel` adds the run's job at once; a sweep every COMPENSATOR_SWEEP_MS
 * adds every COMPENSATING run (a missed NOTIFY, a crashed peer's run, a run that waits on a backoff). The
 * job id derives from the run id, so all of these add one job per run; BullMQ's stalled check hands the
 * job of a compensator killed mid-run to another, which resumes from the log.
 */
export function createCompensatorWorker(d: CompensatorWorkerDeps): CompensatorWorker {
  const shutdown = new AbortController();
  const workerId = newWorkerId();
  const deps: UnwindDeps = {
    ...d,
    workerId,
    shutdownSignal: shutdown.signal,
    groups: createUnwindGroups(d.groupDb ?? d.db, workerId),
  };
  const { config, logger } = d;
  /** The unwind slices running now: what a drain waits for, unlike BullMQ's Redis part around them. */
  const running = createRunningWork();

  const processor = async (job: Job<UnwindJob>): Promise<DriveResult> => {
    const data = unwindJobSchema.safeParse(job.data);
    if (!data.success) throw new UnrecoverableError(`unwind job ${job.id} has malformed data`);
    const result = await running.track(driveRun(deps, data.data.runId, config.COMPENSATOR_SLICE_MS));
    logger.debug({ runId: data.data.runId, result }, 'unwind slice ended');
    return result;
  };
  const worker = new Worker<UnwindJob, DriveResult>(UNWIND_QUEUE, processor, {
    connection: d.connection,
    prefix: config.SAGA_QUEUE_PREFIX,
    concurrency: config.COMPENSATOR_CONCURRENCY,
    lockDuration: config.COMPENSATOR_LOCK_MS,
    stalledInterval: config.COMPENSATOR_STALLED_INTERVAL_MS,
    autorun: false,
  });
  worker.on('failed', (job, err) => logger.error({ err, jobId: job?.id }, 'unwind job failed'));
  worker.on('error', (err) => logger.error({ err }, 'compensator worker error'));

  let timer: NodeJS.Timeout | undefined;
  let listener: ChannelListener | undefined;
  const add = (runId: string) =>
    enqueueUnwind(d.queue, runId).catch((err: unknown) => logger.error({ err, runId }, 'enqueue failed'));
  let sweeping = false;
  let closing = false;
  /** The last sweep found a full batch: more COMPENSATING runs may wait beyond it. */
  let moreBeyondSweep = false;
  const sweep = async (): Promise<void> => {
    if (sweeping || closing) return; // the sweep under way adds what this one would
    sweeping = true;
    try {
      // Uses the partial index `runs_open`: the cost follows the open runs, not every run ever made.
      const open = await d.db
        .selectFrom('runs')
        .select('run_id')
        .where('status', '=', RunStatus.COMPENSATING)
        .orderBy('updated_at')
        .limit(SWEEP_BATCH)
        .execute();
      moreBeyondSweep = open.length === SWEEP_BATCH;
      await enqueueUnwinds(
        d.queue,
        open.map((r) => r.run_id),
      );
    } catch (err) {
      logger.error({ err }, 'sweep of compensating runs failed');
    } finally {
      sweeping = false;
    }
  };
  // Every job of a full sweep has been taken: sweep again now rather than leave the workers idle until
  // the next tick (the runs being unwound come first again, and add nothing: their jobs are running).
  worker.on('drained', () => void (moreBeyondSweep ? sweep() : undefined));
  const abortRunning = (): void =>
    shutdown.abort(new OutcomeUnknownError('compensator shut down while the compensation was running'));

  return {
    workerId,
    async start() {
      listener = await listenChannel({
        db: d.listenDb,
        channel: unwindChannel(d.schema),
        onNotify: (runId) => void (runId ? add(runId) : sweep()),
        onReconnect: () => void sweep(),
        onError: (err) => logger.warn({ err }, 'unwind LISTEN connection error'),
      });
      await sweep();
      timer = setInterval(() => void sweep(), config.COMPENSATOR_SWEEP_MS);
      worker.run().catch((err: unknown) => logger.error({ err }, 'compensator worker stopped'));
    },
    async close(drainMs) {
      closing = true;
      clearInterval(timer);
      await listener?.stop();
      const hurry = setTimeout(abortRunning, drainMs);
      try {
        await closeWorkerWithin({
          what: 'the unwind worker',
          close: () => worker.close(),
          running,
          logger,
        });
      } finally {
        clearTimeout(hurry);
      }
    },
    abortRunning,
  };
}
