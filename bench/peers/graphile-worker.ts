/**
 * graphile-worker 0.17.3: jobs added in bulk (`addJobs`), then one runner with BENCH_CONCURRENCY workers
 * drains them with a no-op task (the job row is the durable record). Batching off is the library's default
 * (each job fetched and completed on its own); batching on fetches into a local queue of
 * {@link LOCAL_QUEUE_SIZE} and completes in batches. Its own schema `graphile_<stamp>`.
 */
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import { dropSchema } from './drop-schema.js';
import { PeerMode, waitForCount, type DrainPeer, type PeerContext } from './peer.js';

/** Why 500: graphile-worker's documented example size for the local queue; one fetch per 500 jobs. */
const LOCAL_QUEUE_SIZE = 500;
/** Errors only: its default logs a line per job at info, which would be most of what it spends here. */
const quietLogger = new Logger(() => (level, message) => {
  if ((level as string) === 'error') console.error(`graphile-worker: ${message}`);
});
/** Why 1,000: one `addJobs` statement per 1,000 jobs keeps each insert's parameter array small. */
const ADD_CHUNK = 1_000;

export function graphileWorkerPeer(ctx: PeerContext, batching: boolean): DrainPeer {
  const schema = `graphile_${batching ? 'b' : 's'}_${ctx.stamp}`;
  const url = ctx.config.DATABASE_URL;
  let utils: WorkerUtils | undefined;
  let runner: Runner | undefined;
  let done = 0;
  return {
    name: `graphile-worker 0.17.3, drain, batching ${batching ? 'on' : 'off'}`,
    mode: PeerMode.DRAIN,
    pgSchema: schema,
    unit: 'job',
    async start() {
      utils = await makeWorkerUtils({ connectionString: url, schema, logger: quietLogger });
      await utils.migrate();
    },
    async add(count) {
      for (let i = 0; i < count; i += ADD_CHUNK)
        await utils!.addJobs(
          Array.from({ length: Math.min(ADD_CHUNK, count - i) }, (_, j) => ({
            identifier: 'noop',
            payload: { n: i + j },
          })),
        );
    },
    async drain(count) {
      runner = await run({
        connectionString: url,
        schema,
        concurrency: ctx.config.BENCH_CONCURRENCY,
        maxPoolSize: ctx.config.DB_POOL_SIZE,
        noHandleSignals: true,
        logger: quietLogger,
        pollInterval: 1000,
        taskList: {
          noop: () => {
            done++;
            return Promise.resolve();
          },
        },
        preset: batching
          ? {
              worker: {
                localQueue: { size: LOCAL_QUEUE_SIZE },
                completeJobBatchDelay: 0,
                failJobBatchDelay: 0,
              },
            }
          : {},
      });
      await waitForCount(this.name, () => done, count, 600_000);
    },
    async stop() {
      await runner?.stop();
      await utils?.release();
      await dropSchema(url, schema);
    },
  };
}
