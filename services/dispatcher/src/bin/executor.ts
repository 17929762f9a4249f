/**
 * Entry point of an executor process: `node <ROLE_NODE_FLAGS> services/dispatcher/dist/bin/executor.js` (after `pnpm build`; from source, `node --import tsx services/dispatcher/src/bin/executor.ts`).
 * Scale by processes and EXECUTOR_CONCURRENCY. SIGTERM drains: no new job is taken (the rest stay in the
 * queue), running calls finish and record; after EXECUTOR_DRAIN_MS (or a second signal) they are aborted
 * and record UNKNOWN.
 */
import {
  bullmqProducerConnection,
  bullmqWorkerConnection,
  createCrashPoints,
  loadToolModule,
  GROUP_POOL_SIZE,
  holdWorkerLiveness,
  runRole,
  startTracing,
} from '@agent-saga/core';
import { loadDispatcherConfig } from '../config.js';
import { createExecutorWorker } from '../executor/executor-worker.js';
import { createWorkerMetrics } from '../metrics/worker-metrics.js';
import { createExecuteQueue } from '../queue/execute-queue.js';

// OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise a no-op (trace ids are stored anyway).
await startTracing('executor');
await runRole({
  name: 'executor',
  loadConfig: loadDispatcherConfig,
  poolSize: (config) => config.DB_POOL_SIZE,
  groupPoolSize: GROUP_POOL_SIZE,
  async start({ config, logger, db, dbOptions, groupDb }) {
    // The module's saga definitions are checked here too, so every role refuses the same bad module.
    const { tools: registry, definitions, lookups } = await loadToolModule(config.SAGA_TOOLS);
    const metrics = createWorkerMetrics(
      'executor',
      config.SAGA_LOG_GAUGES ? { db, cacheMs: config.SAGA_LOG_GAUGES_CACHE_MS, logger } : undefined,
    );
    // Before any claim: every lease this process takes lapses the moment it dies, so the reconciler looks
    // its steps up within a sweep of a crash, not a tool timeout later.
    const liveness = await holdWorkerLiveness(config.SAGA_DB_SCHEMA, {
      db: dbOptions,
      onError: (err) => logger.warn({ err }, 'liveness session lost; reopening (leases count as lapsed)'),
    });
    const executor = createExecutorWorker({
      workerId: liveness.workerId,
      db,
      groupDb,
      registry,
      config,
      // A worker connection: waits for Redis through an outage and carries on.
      connection: bullmqWorkerConnection(config.REDIS_URL),
      crash: createCrashPoints(config.SAGA_CRASH_POINTS),
      logger,
      metrics,
      // A bound run's pivot ends only once its invariant holds against the real systems.
      invariants: { definitions, lookups, logger },
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
    probeQueue?.on('error', (err) => logger.debug({ err }, 'redis error on the readiness connection'));
    return {
      stopWork: () => executor.close(config.EXECUTOR_DRAIN_MS),
      hurry: () => executor.abortRunning(),
      metrics: probeQueue ? { registry: metrics.registry, redis: () => probeQueue.count() } : undefined,
      connections: [
        ...(probeQueue ? [{ what: 'the readiness connection', close: () => probeQueue.close() }] : []),
        // Last, after the drain: a live lease must not look lapsed while its call still runs.
        { what: 'the liveness session', close: () => liveness.stop() },
      ],
      startedLog: {
        workerId: executor.workerId,
        concurrency: config.EXECUTOR_CONCURRENCY,
        tools: registry.list().length,
      },
    };
  },
});
