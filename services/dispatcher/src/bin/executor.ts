/**
 * Entry point of an executor process: `node --import tsx services/dispatcher/src/bin/executor.ts`.
 * Scale by processes and EXECUTOR_CONCURRENCY. SIGTERM drains: no new job is taken (the rest stay in the
 * queue), running calls finish and record; after EXECUTOR_DRAIN_MS (or a second signal) they are aborted
 * and record UNKNOWN.
 */
import {
  createCrashPoints,
  openSagaDb,
  createLogger,
  drainOnSignal,
  exitOnStartFailure,
  loadToolRegistry,
  startMetricsServer,
  stopMetricsServer,
  type Logger,
} from '@agent-saga/core';
import { loadDispatcherConfig } from '../config.js';
import { createExecutorWorker } from '../executor/executor-worker.js';
import { createWorkerMetrics } from '../metrics/worker-metrics.js';
import {
  bullmqProducerConnection,
  bullmqWorkerConnection,
  closeWithin,
  postgresProbe,
} from '@agent-saga/core';
import { createExecuteQueue } from '../queue/execute-queue.js';

async function main(): Promise<void> {
  let logger: Logger | undefined;
  try {
    const config = loadDispatcherConfig();
    logger = createLogger({ level: config.LOG_LEVEL, name: 'saga-executor' });
    const { db } = await openSagaDb(config, 'executor', config.DB_POOL_SIZE, logger);
    const registry = await loadToolRegistry(config.SAGA_TOOLS);
    const metrics = createWorkerMetrics(
      'executor',
      config.SAGA_LOG_GAUGES ? { db, cacheMs: config.SAGA_LOG_GAUGES_CACHE_MS, logger } : undefined,
    );
    const executor = createExecutorWorker({
      db,
      registry,
      config,
      // A worker connection: waits for Redis through an outage and carries on.
      connection: bullmqWorkerConnection(config.REDIS_URL),
      crash: createCrashPoints(config.SAGA_CRASH_POINTS),
      logger,
      metrics,
    });
    executor.start();
    // Only for /readyz: a fail-fast connection to check Redis through (the worker's own connections wait).
    const probeQueue =
      config.METRICS_PORT > 0
        ? createExecuteQueue(
            bullmqProducerConnection(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }),
            config.SAGA_QUEUE_PREFIX,
          )
        : undefined;
    const log = logger;
    probeQueue?.on('error', (err) => log.debug({ err }, 'redis error on the readiness connection'));
    const metricsServer = probeQueue
      ? await startMetricsServer(metrics.registry, config.METRICS_PORT, {
          database: postgresProbe(db),
          redis: () => probeQueue.count(),
        })
      : undefined;
    drainOnSignal({
      logger,
      async drain() {
        await executor.close(config.EXECUTOR_DRAIN_MS);
        if (metricsServer) await stopMetricsServer(metricsServer);
        if (probeQueue) await closeWithin('the readiness connection', () => probeQueue.close(), log);
        await db.destroy();
      },
      hurry: () => executor.abortRunning(),
    });
    logger.info(
      {
        workerId: executor.workerId,
        concurrency: config.EXECUTOR_CONCURRENCY,
        tools: registry.list().length,
      },
      'executor started',
    );
  } catch (err) {
    exitOnStartFailure(logger, err);
  }
}

await main();
