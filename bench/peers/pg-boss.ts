/**
 * pg-boss 10.4.2: jobs inserted in bulk (`insert`), then `work` with a batch of {@link BATCH_SIZE} per
 * fetch (a fetched batch is completed in one statement), one poller (pg-boss 10 has no worker concurrency
 * setting), a no-op handler.
 * Its own schema `pgboss_<stamp>`. pg-boss polls (no LISTEN): its pickup latency is the polling interval.
 */
import PgBoss from 'pg-boss';
import { dropSchema } from './drop-schema.js';
import { PeerMode, waitForCount, type DrainPeer, type PeerContext } from './peer.js';

/** Why 500: the batch the issue measured pg-boss with; pg-boss completes a fetched batch together. */
const BATCH_SIZE = 500;
/** Why 0.5 s: pg-boss 10's smallest polling interval. */
const POLLING_SECONDS = 0.5;
const ADD_CHUNK = 1_000;
const QUEUE = 'bench';

export function pgBossPeer(ctx: PeerContext): DrainPeer {
  const schema = `pgboss_${ctx.stamp}`;
  let boss: PgBoss | undefined;
  let done = 0;
  return {
    name: `pg-boss 10.4.2, drain, batch ${BATCH_SIZE}`,
    mode: PeerMode.DRAIN,
    pgSchema: schema,
    unit: 'job',
    async start() {
      boss = new PgBoss({
        connectionString: ctx.config.DATABASE_URL,
        schema,
        max: ctx.config.DB_POOL_SIZE,
        application_name: 'agent-saga-bench-pgboss',
        supervise: false,
        schedule: false,
      });
      boss.on('error', (err) => console.error(`pg-boss error: ${err.message}`));
      await boss.start();
      await boss.createQueue(QUEUE);
    },
    async add(count) {
      for (let i = 0; i < count; i += ADD_CHUNK)
        await boss!.insert(
          Array.from({ length: Math.min(ADD_CHUNK, count - i) }, (_, j) => ({
            name: QUEUE,
            data: { n: i + j },
          })),
        );
    },
    async drain(count) {
      await boss!.work(QUEUE, { batchSize: BATCH_SIZE, pollingIntervalSeconds: POLLING_SECONDS }, (jobs) => {
        done += jobs.length;
        return Promise.resolve();
      });
      await waitForCount(this.name, () => done, count, 600_000);
    },
    async stop() {
      await boss?.stop({ graceful: true, wait: true, timeout: 10_000 });
      await dropSchema(ctx.config.DATABASE_URL, schema);
    },
  };
}
