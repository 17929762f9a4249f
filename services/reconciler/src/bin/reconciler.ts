/**
 * Entry point of a reconciler process: `node --import tsx services/reconciler/src/bin/reconciler.ts`.
 * Any number may run against one log; scale by processes and RECONCILER_CONCURRENCY. SIGTERM drains: no new
 * sweep or claim starts, the lookups under way finish and record, then the process exits 0.
 */
import {
  openSagaDb,
  createLogger,
  drainOnSignal,
  exitOnStartFailure,
  loadToolRegistry,
  startMetricsServer,
  stopMetricsServer,
  type Logger,
} from '@agent-saga/core';
import { loadReconcilerConfig } from '../config.js';
import { createReconcilerMetrics } from '../metrics/reconciler-metrics.js';
import {
  bullmqProducerConnection,
  bullmqWorkerConnection,
  closeWithin,
  postgresProbe,
} from '@agent-saga/core';
import { keepReconcileSchedulers } from '../queue/keep-reconcile-schedulers.js';
import { createReconcileQueue, upsertReconcileSchedulers } from '../queue/reconcile-queue.js';
import { createReconcilerWorker } from '../worker/reconciler-worker.js';

async function main(): Promise<void> {
  let logger: Logger | undefined;
  try {
    const config = loadReconcilerConfig();
    logger = createLogger({ level: config.LOG_LEVEL, name: 'saga-reconciler' });
    const { db } = await openSagaDb(config, 'reconciler', config.DB_POOL_SIZE, logger);
    const registry = await loadToolRegistry(config.SAGA_TOOLS);
    // The worker waits for Redis through an outage; the queue (schedulers, readiness) fails fast.
    const connection = bullmqWorkerConnection(config.REDIS_URL);
    const queue = createReconcileQueue(
      bullmqProducerConnection(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }),
      config.SAGA_QUEUE_PREFIX,
    );
    const log = logger;
    queue.on('error', (err) => log.warn({ err }, 'redis error on the reconcile queue; reconnecting'));
    const every = { sweepMs: config.RECONCILER_SWEEP_MS, scanMs: config.RECONCILER_SCAN_MS };
    // Redis unreachable at start is not fatal: the keeper below creates the schedulers once it is back.
    await upsertReconcileSchedulers(queue, every).catch((err: unknown) =>
      log.warn({ err }, 'reconcile schedulers not created yet (Redis unreachable); retried every sweep'),
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
    const reconciler = createReconcilerWorker({ db, registry, config, connection, logger, metrics });
    reconciler.start();
    const metricsServer =
      config.METRICS_PORT > 0
        ? await startMetricsServer(metrics.registry, config.METRICS_PORT, {
            database: postgresProbe(db),
            redis: () => queue.count(),
          })
        : undefined;
    drainOnSignal({
      logger,
      async drain() {
        await schedulers.stop();
        await reconciler.close();
        if (metricsServer) await stopMetricsServer(metricsServer);
        await closeWithin('the reconcile queue', () => queue.close(), log);
        await db.destroy();
      },
    });
    logger.info(
      {
        reconcilerId: reconciler.reconcilerId,
        concurrency: config.RECONCILER_CONCURRENCY,
        sweepMs: config.RECONCILER_SWEEP_MS,
        leaseMs: reconciler.leaseMs,
        tools: registry.list().length,
      },
      'reconciler started',
    );
  } catch (err) {
    exitOnStartFailure(logger, err);
  }
}

await main();
