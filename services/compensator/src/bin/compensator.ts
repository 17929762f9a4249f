/**
 * Entry point of a compensator process: `node --import tsx services/compensator/src/bin/compensator.ts`.
 * Its own pool: scale by processes and COMPENSATOR_CONCURRENCY; any number may run at once (one job per
 * run, leases per compensation). SIGTERM drains: no new run is taken, running compensations finish and
 * record; after COMPENSATOR_DRAIN_MS (or a second signal) they are aborted and record unknown.
 */
import {
  bullmqProducerConnection,
  bullmqWorkerConnection,
  closeWithin,
  postgresProbe,
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
import { loadCompensatorConfig } from '../config.js';
import { createCompensatorMetrics } from '../metrics/compensator-metrics.js';
import { createUnwindQueue } from '../queue/unwind-queue.js';
import { createCompensatorWorker } from '../worker/compensator-worker.js';

async function main(): Promise<void> {
  let logger: Logger | undefined;
  try {
    const config = loadCompensatorConfig();
    logger = createLogger({ level: config.LOG_LEVEL, name: 'saga-compensator' });
    const { db, dbOptions } = await openSagaDb(config, 'compensator', config.DB_POOL_SIZE, logger);
    const registry = await loadToolRegistry(config.SAGA_TOOLS);
    // The worker waits for Redis through an outage; the queue (the sweep's adds, readiness) fails fast,
    // and the next sweep adds again.
    const connection = bullmqWorkerConnection(config.REDIS_URL);
    const queue = createUnwindQueue(
      bullmqProducerConnection(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }),
      config.SAGA_QUEUE_PREFIX,
    );
    const log = logger;
    queue.on('error', (err) => log.warn({ err }, 'redis error on the unwind queue; reconnecting'));
    const metrics = createCompensatorMetrics(db, {
      sagaLogGauges: config.SAGA_LOG_GAUGES,
      sagaLogGaugesCacheMs: config.SAGA_LOG_GAUGES_CACHE_MS,
      logger,
    });
    const compensator = createCompensatorWorker({
      db,
      schema: config.SAGA_DB_SCHEMA,
      registry,
      config,
      crash: createCrashPoints(config.SAGA_CRASH_POINTS),
      logger,
      connection,
      queue,
      listenDb: dbOptions,
      metrics,
    });
    await compensator.start();
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
        await compensator.close(config.COMPENSATOR_DRAIN_MS);
        if (metricsServer) await stopMetricsServer(metricsServer);
        await closeWithin('the unwind queue', () => queue.close(), log);
        await db.destroy();
      },
      hurry: () => compensator.abortRunning(),
    });
    logger.info(
      {
        workerId: compensator.workerId,
        concurrency: config.COMPENSATOR_CONCURRENCY,
        schema: config.SAGA_DB_SCHEMA,
        metricsPort: config.METRICS_PORT,
      },
      'compensator started',
    );
  } catch (err) {
    exitOnStartFailure(logger, err);
  }
}

await main();
