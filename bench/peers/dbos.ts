/**
 * DBOS Transact 5.3 (`@dbos-inc/dbos-sdk`): a workflow of one no-op step, run in this process. Two ways:
 * called directly (the workflow's status row and the step's checkpoint are written by this process as it
 * runs), and through a DBOS queue (enqueued, picked up by this process's queue poller, awaited with
 * `getResult()`). Its system database is its own schema `dbos_<stamp>` in the bench's database.
 * DBOS is a process-wide singleton: the workflow is registered once, and each peer launches and shuts
 * it down around its own measurement.
 */
import { DBOS, type WorkflowQueue } from '@dbos-inc/dbos-sdk';
import { dropSchema } from './drop-schema.js';
import { PeerMode, type ClosedLoopPeer, type PeerContext } from './peer.js';

/**
 * Why 50 ms: DBOS's queue poller defaults to once a second, which would make this row a measure of the
 * poll interval (37 workflows/s at 50 in flight, p50 1.05 s, in a first run here); 50 ms is the tuned
 * setting a latency-minded user would pick, and it is still DBOS's own polling.
 */
const QUEUE_POLL_MS = 50;

let oneStep: (() => Promise<number>) | undefined;
function registered(): () => Promise<number> {
  oneStep ??= DBOS.registerWorkflow(
    async () => DBOS.runStep(async () => Promise.resolve(1), { name: 'noop' }),
    { name: 'benchOneStep' },
  );
  return oneStep;
}

export function dbosPeer(ctx: PeerContext, via: 'in-process' | 'queue'): ClosedLoopPeer {
  const schema = `dbos_${via === 'queue' ? 'q' : 'p'}_${ctx.stamp}`;
  let queue: WorkflowQueue | undefined;
  let launched = false;
  return {
    name: `DBOS 5.3, one-step workflow, ${via === 'queue' ? 'through its queue' : 'in process'}`,
    mode: PeerMode.CLOSED_LOOP,
    pgSchema: schema,
    unit: 'workflow (1 step)',
    async start() {
      registered();
      DBOS.setConfig({
        name: 'agent-saga-bench',
        systemDatabaseUrl: ctx.config.DATABASE_URL,
        systemDatabaseSchemaName: schema,
        systemDatabasePoolSize: ctx.config.DB_POOL_SIZE,
        runAdminServer: false,
        logLevel: 'warn',
      });
      await DBOS.launch();
      launched = true;
      if (via === 'queue')
        queue = await DBOS.registerQueue(`bench_${ctx.stamp}`, {
          workerConcurrency: ctx.config.BENCH_CONCURRENCY,
          minPollingIntervalMs: QUEUE_POLL_MS,
        });
    },
    async call() {
      const wf = registered();
      if (queue) {
        const handle = await DBOS.startWorkflow(wf, { queueName: queue.name })();
        await handle.getResult();
      } else await wf();
    },
    async stop() {
      if (launched) await DBOS.shutdown();
      launched = false;
      await dropSchema(ctx.config.DATABASE_URL, schema);
    },
  };
}
