/**
 * Entry point of an outbox relay process: `node --import tsx services/dispatcher/src/bin/relay.ts`.
 * Any number may run at once. SIGTERM stops claiming and lets the batch under way publish and mark.
 */
import {
  createCrashPoints,
  openSagaDb,
  createLogger,
  drainOnSignal,
  exitOnStartFailure,
  startMetricsServer,
  stopMetricsServer,
  type Logger,
} from '@agent-saga/core';
import { loadDispatcherConfig } from '../config.js';
import { createWorkerMetrics } from '../metrics/worker-metrics.js';
import { bullmqProducerConnection, closeWithin, postgresProbe } from '@agent-saga/core';
import { createExecuteQueue } from '../queue/execute-queue.js';
import { createOutboxRelay } from '../relay/outbox-relay.js';

async function main(): Promise<void> {
  let logger: Logger | undefined;
  try {
    const config = loadDispatcherConfig();
    logger = createLogger({ level: config.LOG_LEVEL, name: 'saga-relay' });
    const { db, dbOptions } = await openSagaDb(config, 'relay', Math.min(config.DB_POOL_SIZE, 4), logger);
    // A producer connection: while Redis is down a batch fails fast and is given back (no offline queue).
    const queue = createExecuteQueue(
      bullmqProducerConnection(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }),
      config.SAGA_QUEUE_PREFIX,
    );
    const log = logger;
    queue.on('error', (err) => log.warn({ err }, 'redis error on the execute queue; reconnecting'));
    const metrics = createWorkerMetrics(
      'relay',
      config.SAGA_LOG_GAUGES ? { db, cacheMs: config.SAGA_LOG_GAUGES_CACHE_MS, logger } : undefined,
    );
    const relay = createOutboxRelay({
      db,
      queue,
      config,
      listenDb: dbOptions,
      crash: createCrashPoints(config.SAGA_CRASH_POINTS),
      logger,
      metrics,
    });
    await relay.start();
    const metricsServer =
      config.METRICS_PORT > 0
        ? await startMetricsServer(metrics.registry, config.METRICS_PORT, {
            database: postgresProbe(db),
            redis: () => queue.count(),
          })
        : undefined;
    drainOnSignal({
      logger: log,
      async drain() {
        await relay.stop();
        if (metricsServer) await stopMetricsServer(metricsServer);
        await closeWithin('the execute queue', () => queue.close(), log);
        await db.destroy();
      },
    });
    logger.info({ schema: config.SAGA_DB_SCHEMA, fastPath: config.SAGA_FAST_PATH }, 'relay started');
  } catch (err) {
    exitOnStartFailure(logger, err);
  }
}

await main();
