/**
 * Entry point of a reconciler process: `node <ROLE_NODE_FLAGS> services/reconciler/dist/bin/reconciler.js` (after `pnpm build`; from source, `node --import tsx services/reconciler/src/bin/reconciler.ts`).
 * Any number may run against one log; scale by processes and RECONCILER_CONCURRENCY. SIGTERM drains: no new
 * sweep or claim starts, the lookups under way finish and record, then the process exits 0.
 */
import {
  bullmqProducerConnection,
  bullmqWorkerConnection,
  loadToolModule,
  runRole,
  startTracing,
} from '@agent-saga/core';
import { loadReconcilerConfig } from '../config.js';
import { createReconcilerMetrics } from '../metrics/reconciler-metrics.js';
import { keepReconcileSchedulers } from '../queue/keep-reconcile-schedulers.js';
import { createReconcileQueue, upsertReconcileSchedulers } from '../queue/reconcile-queue.js';
import { pruneOnSchedule } from '../retention/prune-on-schedule.js';
import { createReconcilerWorker } from '../worker/reconciler-worker.js';

// OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise a no-op (trace ids are stored anyway).
await startTracing('reconciler');
await runRole({
  name: 'reconciler',
  loadConfig: loadReconcilerConfig,
  poolSize: (config) => config.DB_POOL_SIZE,
  async start({ config, logger, db }) {
    // The module's saga definitions are checked here too, so every role refuses the same bad module.
    const { tools: registry, definitions, lookups } = await loadToolModule(config.SAGA_TOOLS);
    // The worker waits for Redis through an outage; the queue (schedulers, readiness) fails fast.
    const queue = createReconcileQueue(
      bullmqProducerConnection(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }),
      config.SAGA_QUEUE_PREFIX,
    );
    queue.on('error', (err) => logger.warn({ err }, 'redis error on the reconcile queue; reconnecting'));
    const every = { sweepMs: config.RECONCILER_SWEEP_MS, scanMs: config.RECONCILER_SCAN_MS };
    // Redis unreachable at start is not fatal: the keeper below creates the schedulers once it is back.
    await upsertReconcileSchedulers(queue, every).catch((err: unknown) =>
      logger.warn({ err }, 'reconcile schedulers not created yet (Redis unreachable); retried every sweep'),
    );
    // The schedulers live only in Redis: re-created by this process if Redis comes back without them.
    const schedulers = keepReconcileSchedulers(queue, every, logger);
    const metrics = createReconcilerMetrics(db, {
      stuckRunMs: config.RECONCILER_STUCK_RUN_MS,
      staleOutboxMs: config.RECONCILER_STALE_OUTBOX_MS,
      sagaLogGauges: config.SAGA_LOG_GAUGES,
      sagaLogGaugesCacheMs: config.SAGA_LOG_GAUGES_CACHE_MS,
      logger,
    });
    const connection = bullmqWorkerConnection(config.REDIS_URL);
    // The pivot's end of a bound run waits on its invariant, which this role checks (it reads the vendors).
    const invariants = { definitions, lookups, logger };
    const reconciler = createReconcilerWorker({
      db,
      registry,
      invariants,
      config,
      connection,
      logger,
      metrics,
    });
    reconciler.start();
    // Retention (SAGA_PRUNE_OLDER_THAN set): core's pruneLog every SAGA_PRUNE_INTERVAL_MS.
    const retention =
      config.SAGA_PRUNE_OLDER_THAN === undefined
        ? undefined
        : pruneOnSchedule({
            db,
            logger,
            olderThanMs: config.SAGA_PRUNE_OLDER_THAN,
            intervalMs: config.SAGA_PRUNE_INTERVAL_MS,
            batchSize: config.SAGA_PRUNE_BATCH_SIZE,
          });
    return {
      async stopWork() {
        await retention?.stop();
        await schedulers.stop();
        await reconciler.close();
      },
      metrics: { registry: metrics.registry, redis: () => queue.count() },
      connections: [{ what: 'the reconcile queue', close: () => queue.close() }],
      startedLog: {
        reconcilerId: reconciler.reconcilerId,
        concurrency: config.RECONCILER_CONCURRENCY,
        sweepMs: config.RECONCILER_SWEEP_MS,
        leaseMs: reconciler.leaseMs,
        tools: registry.list().length,
        prune:
          config.SAGA_PRUNE_OLDER_THAN === undefined
            ? null
            : { olderThanMs: config.SAGA_PRUNE_OLDER_THAN, intervalMs: config.SAGA_PRUNE_INTERVAL_MS },
      },
    };
  },
});
