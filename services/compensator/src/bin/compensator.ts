/**
 * Entry point of a compensator process: `node <ROLE_NODE_FLAGS> services/compensator/dist/bin/compensator.js` (after `pnpm build`; from source, `node --import tsx services/compensator/src/bin/compensator.ts`).
 * Its own pool: scale by processes and COMPENSATOR_CONCURRENCY; any number may run at once (one lock per
 * run, leases per compensation). It needs Postgres only, never Redis. SIGTERM drains: no new run is taken,
 * running compensations finish and record; after COMPENSATOR_DRAIN_MS (or a second signal) they are aborted
 * and record unknown.
 */
import { createCrashPoints, loadToolModule, GROUP_POOL_SIZE, runRole, startTracing } from '@agent-saga/core';
import { loadCompensatorConfig } from '../config.js';
import { createCompensatorMetrics } from '../metrics/compensator-metrics.js';
import { createCompensatorWorker } from '../worker/compensator-worker.js';

// OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise a no-op (trace ids are stored anyway).
await startTracing('compensator');
await runRole({
  name: 'compensator',
  loadConfig: loadCompensatorConfig,
  poolSize: (config) => config.DB_POOL_SIZE,
  groupPoolSize: GROUP_POOL_SIZE,
  async start({ config, logger, db, dbOptions, groupDb }) {
    // The module's saga definitions are checked against its tools here too: a bad one stops every role at start.
    const { tools: registry, definitions, lookups } = await loadToolModule(config.SAGA_TOOLS);
    const metrics = createCompensatorMetrics(db, {
      sagaLogGauges: config.SAGA_LOG_GAUGES,
      sagaLogGaugesCacheMs: config.SAGA_LOG_GAUGES_CACHE_MS,
      logger,
    });
    const compensator = createCompensatorWorker({
      db,
      groupDb,
      schema: config.SAGA_DB_SCHEMA,
      registry,
      config,
      crash: createCrashPoints(config.SAGA_CRASH_POINTS),
      logger,
      listenDb: dbOptions,
      metrics,
      // A bound run is called COMPENSATED only once its invariant holds against the real systems.
      invariants: { definitions, lookups, logger },
    });
    await compensator.start();
    return {
      stopWork: () => compensator.close(config.COMPENSATOR_DRAIN_MS),
      hurry: () => compensator.abortRunning(),
      metrics: { registry: metrics.registry },
      startedLog: {
        workerId: compensator.workerId,
        concurrency: config.COMPENSATOR_CONCURRENCY,
        schema: config.SAGA_DB_SCHEMA,
        metricsPort: config.METRICS_PORT,
      },
    };
  },
});
