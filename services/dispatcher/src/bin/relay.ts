/**
 * Entry point of an outbox relay process: `node <ROLE_NODE_FLAGS> services/dispatcher/dist/bin/relay.js` (after `pnpm build`; from source, `node --import tsx services/dispatcher/src/bin/relay.ts`).
 * Any number may run at once. SIGTERM stops claiming and lets the batch under way publish and mark.
 */
import { bullmqProducerConnection, createCrashPoints, runRole, startTracing } from '@agent-saga/core';
import { loadDispatcherConfig } from '../config.js';
import { registerExecuteQueueGauges } from '../metrics/execute-queue-gauges.js';
import { createWorkerMetrics } from '../metrics/worker-metrics.js';
import { createExecuteQueue } from '../queue/execute-queue.js';
import { createOutboxRelay } from '../relay/outbox-relay.js';

// OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise a no-op (trace ids are stored anyway).
await startTracing('relay');
await runRole({
  name: 'relay',
  loadConfig: loadDispatcherConfig,
  // Claims and marks in batches: a few connections serve it.
  poolSize: (config) => Math.min(config.DB_POOL_SIZE, 4),
  async start({ config, logger, db, dbOptions }) {
    // A producer connection: while Redis is down a batch fails fast and is given back (no offline queue).
    const queue = createExecuteQueue(
      bullmqProducerConnection(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }),
      config.SAGA_QUEUE_PREFIX,
    );
    queue.on('error', (err) => logger.warn({ err }, 'redis error on the execute queue; reconnecting'));
    const metrics = createWorkerMetrics(
      'relay',
      config.SAGA_LOG_GAUGES ? { db, cacheMs: config.SAGA_LOG_GAUGES_CACHE_MS, logger } : undefined,
    );
    // The executors' autoscaling signal (saga_execute_jobs_waiting): why the relay owns it, in that file.
    registerExecuteQueueGauges(metrics.registry, queue, logger);
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
    return {
      stopWork: () => relay.stop(),
      metrics: { registry: metrics.registry, redis: () => queue.count() },
      connections: [{ what: 'the execute queue', close: () => queue.close() }],
      startedLog: { schema: config.SAGA_DB_SCHEMA, fastPath: config.SAGA_FAST_PATH },
    };
  },
});
