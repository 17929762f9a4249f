/**
 * BullMQ 6.7 add and drain, on Redis (the machine's Redis, under the bench's prefix) and on BullMQ 6's
 * PostgreSQL backend (`createPostgresBackend`, its own schema `bullmq_<stamp>`): jobs added with `addBulk`,
 * then one Worker with BENCH_CONCURRENCY drains them with a no-op processor. Job options are the
 * executor's (one attempt, removed on completion). The worker runs in the bench process.
 */
import { createPostgresBackend, Queue, Worker } from '../bullmq.js';
import { dropSchema } from './drop-schema.js';
import { PeerMode, waitForCount, type DrainPeer, type PeerContext } from './peer.js';

const ADD_CHUNK = 1_000;
const JOB_OPTIONS = { attempts: 1, removeOnComplete: true, removeOnFail: true };

export function bullmqDrainPeer(ctx: PeerContext, backend: 'redis' | 'postgres'): DrainPeer {
  const schema = backend === 'postgres' ? `bullmq_${ctx.stamp}` : null;
  const name = `drain-${backend}`;
  // Both backends take their connection in `connection`; `prefix` is Redis-only (the Postgres one uses the schema).
  const redisOpts = {
    connection: { url: ctx.config.REDIS_URL, maxRetriesPerRequest: null },
    prefix: ctx.queuePrefix,
  };
  const pgOpts = {
    connection: {
      connectionString: ctx.config.DATABASE_URL,
      schema: schema ?? '',
      max: ctx.config.DB_POOL_SIZE,
      migrate: true,
    },
  };
  let queue: Queue | undefined;
  let worker: Worker | undefined;
  let done = 0;
  return {
    name: `BullMQ 6.7 on ${backend === 'redis' ? 'Redis' : 'Postgres'}, drain`,
    mode: PeerMode.DRAIN,
    pgSchema: schema,
    unit: 'job',
    async start() {
      queue =
        backend === 'redis'
          ? new Queue(name, { ...redisOpts, defaultJobOptions: JOB_OPTIONS })
          : (new Queue(
              name,
              { ...pgOpts, defaultJobOptions: JOB_OPTIONS },
              createPostgresBackend,
            ) as unknown as Queue);
      await queue.waitUntilReady();
    },
    async add(count) {
      for (let i = 0; i < count; i += ADD_CHUNK)
        await queue!.addBulk(
          Array.from({ length: Math.min(ADD_CHUNK, count - i) }, (_, j) => ({
            name: 'noop',
            data: { n: i + j },
          })),
        );
    },
    async drain(count) {
      const opts = { concurrency: ctx.config.BENCH_CONCURRENCY };
      worker =
        backend === 'redis'
          ? new Worker(name, async () => {}, { ...redisOpts, ...opts })
          : (new Worker(
              name,
              async () => {},
              { ...pgOpts, ...opts },
              createPostgresBackend,
            ) as unknown as Worker);
      worker.on('completed', () => void done++);
      worker.on('error', (err) => console.error(`bullmq ${backend} worker error: ${err.message}`));
      await waitForCount(this.name, () => done, count, 600_000);
    },
    async stop() {
      await worker?.close();
      await queue?.close();
      if (schema) await dropSchema(ctx.config.DATABASE_URL, schema);
    },
  };
}
