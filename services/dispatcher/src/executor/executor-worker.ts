import { DelayedError, UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { closeWorkerWithin, executeJobSchema, type ExecuteJob } from '@agent-saga/core';
import type { DispatcherConfig } from '../config.js';
import { EXECUTE_QUEUE } from '../queue/execute-queue.js';
import { ClaimFailedError } from './claim-failed-error.js';
import { executeStep, type ExecuteStepDeps, type ExecuteStepResult } from './execute-step.js';
import { createStepRunner } from './step-runner.js';

/**
 * Slack added to a live lease before a redelivered job looks again: the lease is stamped by the
 * database's clock, the delay is counted by this process's.
 */
const HELD_RECHECK_SLACK_MS = 250;

/**
 * Backoff of a job whose claim failed on a database error: 500 ms doubling to 15 s. Why: a connection reset
 * or a failover heals in a second or two, a restart in tens of seconds; the retries stop after
 * CLAIM_RETRIES (about 1.5 min in all), and the job then fails. A longer outage is the republish's
 * (`republishUnclaimedIntents`: a fresh job id once the step has stayed unclaimed past its bound), since a
 * failed job keeps its id for a day (`removeOnFail`) and the relay cannot add it again.
 */
const CLAIM_RETRY_BASE_MS = 500;
const CLAIM_RETRY_MAX_MS = 15_000;
const CLAIM_RETRIES = 10;

/** The delay before the `retry`-th retry (1-based) of a failed claim. */
export function claimRetryDelayMs(retry: number): number {
  return Math.min(CLAIM_RETRY_MAX_MS, CLAIM_RETRY_BASE_MS * 2 ** Math.max(0, retry - 1));
}

export interface ExecutorWorker {
  readonly worker: Worker<ExecuteJob, ExecuteStepResult['kind']>;
  readonly workerId: string;
  /** Starts taking jobs. */
  start(): void;
  /**
   * Drains: takes no new job (jobs not started stay in the queue) and waits for the running ones. After
   * `drainMs` it aborts their signals, so they end and record UNKNOWN instead of being cut off. Once they
   * have, BullMQ's bookkeeping in Redis gets a bound (`closeWorkerWithin`), so the drain ends even while
   * Redis is unreachable.
   */
  close(drainMs: number): Promise<void>;
  /** Aborts the running calls now (a second SIGTERM). */
  abortRunning(): void;
}

export type ExecutorWorkerDeps = Omit<ExecuteStepDeps, 'workerId' | 'shutdownSignal'> & {
  readonly config: ExecuteStepDeps['config'] &
    Pick<
      DispatcherConfig,
      'SAGA_QUEUE_PREFIX' | 'EXECUTOR_CONCURRENCY' | 'EXECUTOR_LOCK_MS' | 'EXECUTOR_STALLED_INTERVAL_MS'
    >;
  readonly connection: ConnectionOptions;
  /** The lease owner id the process proves alive (`holdWorkerLiveness`); a plain new one otherwise. */
  readonly workerId?: string;
};

/**
 * The executor pool of one process: a BullMQ worker on {@link EXECUTE_QUEUE} with EXECUTOR_CONCURRENCY
 * jobs at once. Each job runs {@link executeStep}; the claims and the outcome records of concurrent jobs are
 * grouped into one statement and one commit each (see `executor-groups.ts`). A job redelivered while another attempt holds a live
 * lease (BullMQ's stalled check after a worker stopped renewing its lock) is not run: it is delayed to just
 * after the lease ends and looks again, when the step is either settled by its holder (nothing to do) or
 * still INTENDED with the lease expired (moved to UNKNOWN, never executed twice).
 *
 * BullMQ never retries a job by itself (`attempts: 1`): the worker decides. A claim that failed on a database
 * error ({@link ClaimFailedError}: the tool was not called) is delayed with a backoff and tried again, as a
 * held job is; any other failure (the tool, or recording its outcome, after the tool may have run) fails the
 * job and is never retried blindly: the step's lease runs out and the reconciler settles it by lookup.
 */
export function createExecutorWorker(d: ExecutorWorkerDeps): ExecutorWorker {
  const { workerId, deps, running, abortRunning } = createStepRunner(d, {
    concurrency: d.config.EXECUTOR_CONCURRENCY,
    role: 'executor',
    ...(d.workerId !== undefined ? { workerId: d.workerId } : {}),
  });

  const processor = async (job: Job<ExecuteJob>, token?: string): Promise<ExecuteStepResult['kind']> => {
    const data = executeJobSchema.safeParse(job.data);
    if (!data.success) throw new UnrecoverableError(`execute job ${job.id} has malformed data`);
    let result: ExecuteStepResult;
    try {
      result = await running.track(executeStep(deps, data.data, job.id ?? data.data.key));
    } catch (err) {
      // Only a failure that provably happened before the tool ran is retried; anything else fails the job.
      if (!(err instanceof ClaimFailedError)) throw err;
      // attemptsStarted counts every move to active, the first delivery included.
      const retry = job.attemptsStarted;
      if (retry > CLAIM_RETRIES) throw err;
      const delayMs = claimRetryDelayMs(retry);
      d.logger.warn({ err, jobId: job.id, key: data.data.key, retry, delayMs }, 'claim failed; job retried');
      await job.moveToDelayed(Date.now() + delayMs, token);
      throw new DelayedError();
    }
    if (result.kind === 'held') {
      await job.moveToDelayed(result.leaseUntil.getTime() + HELD_RECHECK_SLACK_MS, token);
      throw new DelayedError();
    }
    if (result.kind === 'missing') d.logger.warn({ jobId: job.id, key: data.data.key }, 'no step for job');
    if (result.kind !== 'executed') d.metrics?.executions.inc({ tool: '(none)', outcome: result.kind });
    return result.kind;
  };

  const worker = new Worker<ExecuteJob, ExecuteStepResult['kind']>(EXECUTE_QUEUE, processor, {
    connection: d.connection,
    prefix: d.config.SAGA_QUEUE_PREFIX,
    concurrency: d.config.EXECUTOR_CONCURRENCY,
    lockDuration: d.config.EXECUTOR_LOCK_MS,
    stalledInterval: d.config.EXECUTOR_STALLED_INTERVAL_MS,
    autorun: false,
  });
  worker.on('failed', (job, err) => d.logger.error({ err, jobId: job?.id }, 'execute job failed'));
  worker.on('error', (err) => d.logger.error({ err }, 'executor worker error'));

  return {
    worker,
    workerId,
    start() {
      worker.run().catch((err: unknown) => d.logger.error({ err }, 'executor worker stopped'));
    },
    async close(drainMs) {
      const timer = setTimeout(abortRunning, drainMs);
      try {
        await closeWorkerWithin({
          what: 'the execute worker',
          close: () => worker.close(),
          running,
          logger: d.logger,
        });
      } finally {
        clearTimeout(timer);
      }
    },
    abortRunning,
  };
}
