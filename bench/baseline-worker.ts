/**
 * The baseline's worker process: a bare BullMQ worker whose every job is one Postgres INSERT. It is what
 * "a queue plus one durable write" costs with the same Redis, the same Postgres driver and pool size, and
 * the same process layout as the executor. Started by bullmq-baseline.ts; SIGTERM closes it.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import { createDb, parseConfig } from '@agent-saga/core';
import { BASELINE_QUEUE, BASELINE_READY_LINE } from './baseline-queue.js';
import { Worker } from './bullmq.js';

const config = parseConfig(
  z.object({
    DATABASE_URL: z.string().url(),
    REDIS_URL: z.string().url(),
    BENCH_SCHEMA: z.string().min(1),
    BENCH_QUEUE_PREFIX: z.string().min(1),
    BENCH_CONCURRENCY: z.coerce.number().int().positive(),
    DB_POOL_SIZE: z.coerce.number().int().positive(),
  }),
  process.env,
);

async function main(): Promise<void> {
  const db = createDb({
    url: config.DATABASE_URL,
    schema: config.BENCH_SCHEMA,
    poolSize: config.DB_POOL_SIZE,
    applicationName: 'agent-saga-bench-baseline',
  });
  const worker = new Worker(
    BASELINE_QUEUE,
    async (job) => {
      await sql`INSERT INTO baseline_jobs (job_id, payload) VALUES (${job.id ?? ''}, ${JSON.stringify(job.data)})`.execute(
        db,
      );
    },
    {
      connection: { url: config.REDIS_URL, maxRetriesPerRequest: null },
      prefix: config.BENCH_QUEUE_PREFIX,
      concurrency: config.BENCH_CONCURRENCY,
    },
  );
  worker.on('error', (err) => process.stderr.write(`baseline worker error: ${err.message}\n`));
  await worker.waitUntilReady();
  process.stdout.write(`${BASELINE_READY_LINE}\n`);
  process.once('SIGTERM', () => {
    void (async () => {
      await worker.close();
      await db.destroy();
      process.exit(0);
    })();
  });
}

await main();
