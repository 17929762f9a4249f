/**
 * Entry point of an API process: `node <ROLE_NODE_FLAGS> services/dispatcher/dist/bin/api.js` (after `pnpm build`; from source, `node --import tsx services/dispatcher/src/bin/api.ts`). Scale by processes
 * behind a load balancer; each holds one pool and one LISTEN connection. SIGTERM drains: the server stops
 * accepting (new requests get 503), calls waiting for an outcome answer 202 at once, requests under way
 * finish, then the pools close. `/healthz` and `/readyz` answer on the API's port (load balancers and
 * orchestrators probe it there); its metrics answer on their own listener, `METRICS_HOST:METRICS_PORT`
 * (127.0.0.1 by default, behind METRICS_TOKEN when set), like every worker role's, never on the API's port.
 */
import { Registry } from 'prom-client';
import {
  bullmqProducerConnection,
  createCrashPoints,
  loadToolModule,
  GROUP_POOL_SIZE,
  runRole,
  startTracing,
} from '@agent-saga/core';
import { buildApi } from '../api/build-api.js';
import { loadDispatcherConfig } from '../config.js';
import { createInlineExecutor } from '../executor/inline-executor.js';
import { registerExecutionMetrics } from '../metrics/worker-metrics.js';
import { createExecuteQueue } from '../queue/execute-queue.js';

// OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise a no-op (trace ids are stored anyway).
await startTracing('api');
await runRole({
  name: 'api',
  loadConfig: loadDispatcherConfig,
  poolSize: (config) => config.DB_POOL_SIZE,
  groupPoolSize: GROUP_POOL_SIZE,
  async start({ config, logger, db, groupDb }) {
    const { tools: registry, definitions, lookups } = await loadToolModule(config.SAGA_TOOLS);
    // A producer connection: while Redis is down the fast path fails at once and the relay takes over.
    const queue = createExecuteQueue(
      bullmqProducerConnection(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }),
      config.SAGA_QUEUE_PREFIX,
    );
    queue.on('error', (err) => logger.warn({ err }, 'redis error on the execute queue; reconnecting'));
    // SAGA_EXECUTE_INLINE: first attempts run here, as an executor runs them (crash points included),
    // counted as an executor counts them, on this listener beside the API's series.
    const inlineRegistry = new Registry();
    const inline = config.SAGA_EXECUTE_INLINE
      ? createInlineExecutor({
          db,
          groupDb,
          registry,
          config,
          concurrency: config.EXECUTOR_CONCURRENCY,
          crash: createCrashPoints(config.SAGA_CRASH_POINTS),
          logger,
          metrics: registerExecutionMetrics(inlineRegistry),
          invariants: { definitions, lookups, logger },
        })
      : undefined;
    const { app, metrics } = await buildApi({
      db,
      groupDb,
      inline,
      schema: config.SAGA_DB_SCHEMA,
      registry,
      definitions,
      lookups,
      queue,
      config,
      logger,
    });
    await app.listen({ host: config.HOST, port: config.PORT });
    return {
      // Answers first (waiting calls get 202 at once), then the steps running here finish and record; after
      // EXECUTOR_DRAIN_MS they are aborted and record UNKNOWN, as an executor's are.
      stopWork: async () => {
        await app.close();
        await inline?.close(config.EXECUTOR_DRAIN_MS);
      },
      hurry: () => inline?.abortRunning(),
      // The producer connection again: with no offline queue, a Redis that is down fails the probe at once.
      metrics: {
        registry: inline ? Registry.merge([metrics.registry, inlineRegistry]) : metrics.registry,
        redis: () => queue.count(),
      },
      connections: [{ what: 'the execute queue', close: () => queue.close() }],
      startedLog: {
        tools: registry.list().map((t) => t.name),
        definitions: definitions.list().map((d) => `${d.name}@${d.version}`),
        schema: config.SAGA_DB_SCHEMA,
        fastPath: config.SAGA_FAST_PATH,
        executeInline: config.SAGA_EXECUTE_INLINE,
      },
    };
  },
});
