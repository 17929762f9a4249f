import { sql } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import {
  registerDefinitionGauges,
  registerSagaLogGauges,
  SagaLogGaugeGroup,
  type SagaDb,
} from '@agent-saga/core';

/**
 * The `tool` label of a refused call whose tool is not registered: labels come from registered names only,
 * so no caller can add series (and memory) by sending made-up tool names.
 */
export const UNREGISTERED_TOOL_LABEL = '(unregistered)';

/** The Prometheus metrics of the API process, on a registry of its own (several apps may share a process). */
export interface ApiMetrics {
  readonly registry: Registry;
  /** Calls answered, by tool and outcome (PURE, CONFIRMED, FAILED, UNKNOWN, INTENDED, …, or an error code). */
  readonly calls: Counter<'tool' | 'outcome'>;
  /** Seconds from the commit of an intent to the API seeing its step settle, for calls that waited. */
  readonly dispatchLatency: Histogram<'tool'>;
}

/**
 * Creates the registry. The gauges read the saga log when scraped (not on every call): the UNKNOWN backlog
 * (`saga_unknown_steps` and the age of the oldest, the `unknown_steps` group of the shared saga-log gauges:
 * one definition for every role) and the age of the oldest unpublished outbox message (how far the relay
 * and the fast path are behind). Both read partial indexes on unsettled rows, so every API replica may run
 * them; the heavier saga-log gauges come from the role configured with SAGA_LOG_GAUGES (the reconciler).
 *
 * The gauges by saga definition (`registerDefinitionGauges`: runs by status, unwinds, manual
 * interventions, unknown steps and invariant violations, label `definition`) live here because the API is
 * the role that knows the registered definitions, the only names the label takes (`definitions`; `none`
 * for unbound runs). They read counters and partial indexes, never the log's history, so every replica may
 * run them.
 */
export function createApiMetrics(db: SagaDb, definitions: readonly string[] = []): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const calls = new Counter({
    name: 'saga_calls_total',
    help: 'Tool calls answered by the API, by tool and outcome',
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry],
  });
  const dispatchLatency = new Histogram({
    name: 'saga_dispatch_latency_seconds',
    help: 'From the commit of an intent to the API seeing the step settle',
    labelNames: ['tool'] as const,
    // From the 5 ms target of an unloaded no-op up to the 60 s longest wait.
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  registerSagaLogGauges(registry, db, { groups: [SagaLogGaugeGroup.UNKNOWN_STEPS] });
  registerDefinitionGauges(registry, db, { definitions: [...new Set(definitions)] });
  new Gauge({
    name: 'saga_outbox_lag_seconds',
    help: 'Age of the oldest unpublished outbox message (0 when none)',
    registers: [registry],
    async collect() {
      const r = await sql<{ lag: number | null }>`
        SELECT extract(epoch FROM now() - created_at)::float8 AS lag
          FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT 1`.execute(db);
      this.set(r.rows[0]?.lag ?? 0);
    },
  });
  return { registry, calls, dispatchLatency };
}
