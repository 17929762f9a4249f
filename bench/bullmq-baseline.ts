import { resolve } from 'node:path';
import { sql } from 'kysely';
import type { SagaDb } from '@agent-saga/core';
import { REPO_ROOT, type BenchConfig } from './bench-config.js';
import { BASELINE_QUEUE, BASELINE_READY_LINE } from './baseline-queue.js';
import { Queue, QueueEvents } from './bullmq.js';
import { startTsx, waitUntil, type TsxChild } from './child-process.js';

/**
 * The baseline: the same no-op done as a bare BullMQ add-and-process with one Postgres INSERT per job.
 * The producer (this process) adds a job and waits for its `completed` event (QueueEvents), so the
 * latency is add → completion as the producer sees it, like a client-observed call. Job options are the
 * executor's: one attempt, removed on completion.
 */
export interface BullmqBaseline {
  /** The worker process's pid (for CPU accounting). */
  readonly workerPid: number | undefined;
  /** One job: add, then wait for its completion. */
  job(lane: number): Promise<void>;
  /** Stops the worker process (SIGTERM) and closes the producer's connections. */
  close(): Promise<{ code: number | null; killed: boolean }>;
}

export async function startBullmqBaseline(
  config: BenchConfig,
  target: { readonly db: SagaDb; readonly schema: string; readonly queuePrefix: string },
): Promise<BullmqBaseline> {
  await sql`CREATE TABLE baseline_jobs (
      id bigserial PRIMARY KEY, job_id text NOT NULL, payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`.execute(target.db);
  const connection = { url: config.REDIS_URL, maxRetriesPerRequest: null };
  const prefix = target.queuePrefix;
  const queue = new Queue(BASELINE_QUEUE, {
    connection,
    prefix,
    defaultJobOptions: { attempts: 1, removeOnComplete: true, removeOnFail: true },
  });
  const events = new QueueEvents(BASELINE_QUEUE, { connection, prefix });
  const waiting = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  events.on('completed', ({ jobId }) => waiting.get(jobId)?.resolve());
  events.on('failed', ({ jobId, failedReason }) =>
    waiting.get(jobId)?.reject(new Error(`baseline job ${jobId} failed: ${failedReason}`)),
  );
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);

  const worker: TsxChild = startTsx('baseline-worker', resolve(REPO_ROOT, 'bench/baseline-worker.ts'), {
    DATABASE_URL: config.DATABASE_URL,
    REDIS_URL: config.REDIS_URL,
    BENCH_SCHEMA: target.schema,
    BENCH_QUEUE_PREFIX: prefix,
    BENCH_CONCURRENCY: String(config.EXECUTOR_CONCURRENCY),
    DB_POOL_SIZE: String(config.DB_POOL_SIZE),
  });
  await waitUntil(
    'the baseline worker',
    () => Promise.resolve(worker.output().includes(BASELINE_READY_LINE)),
    60_000,
    [worker],
  );

  let n = 0;
  return {
    workerPid: worker.child.pid,
    async job() {
      const jobId = `b${n++}`;
      const done = new Promise<void>((res, rej) => waiting.set(jobId, { resolve: res, reject: rej }));
      try {
        await queue.add('noop', { n }, { jobId });
        await done;
      } finally {
        waiting.delete(jobId);
      }
    },
    async close() {
      const r = await worker.stop(15_000);
      await events.close();
      await queue.close();
      return { code: r.code, killed: r.killed };
    },
  };
}
