import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import {
  attemptsPerEffectHistogram,
  duplicateEffectCounter,
  createRoleRegistry,
  type Logger,
  type SagaDb,
} from '@agent-saga/core';

/**
 * Prometheus metrics of the relay and executor processes, on a registry of their own (the API keeps its
 * own in `api-metrics.ts`), so a process exposes exactly the series of its role.
 */
export interface WorkerMetrics extends ExecutionMetrics {
  readonly registry: Registry;
  /** Outbox rows the relay published to BullMQ. */
  readonly relayPublished: Counter;
  /** Age of the oldest outbox row still unpublished, in seconds (0 when none), as of the last sweep. */
  readonly outboxLag: Gauge;
}

/**
 * What running steps records: an executor's, and the API's when it runs steps itself
 * (SAGA_EXECUTE_INLINE, on the API's own registry: see `registerExecutionMetrics`).
 */
export interface ExecutionMetrics {
  /** Executions by tool and outcome (`confirmed`, `failed`, `unknown`, `lease_expired`, `duplicate`…). */
  readonly executions: Counter<'tool' | 'outcome'>;
  /** Time spent inside `tool.execute`, by tool and outcome. */
  readonly toolLatency: Histogram<'tool' | 'outcome'>;
  /** From the commit of a step's intent to the executor recording its outcome, by tool and outcome. */
  readonly settleLatency: Histogram<'tool' | 'outcome'>;
  /** Attempts sent for a step by the time its effect was confirmed (retry amplification), by tool. */
  readonly attemptsPerEffect: Histogram<'tool'>;
  /** Calls whose effect reported more than one effect under one key, by tool. */
  readonly duplicateEffects: Counter<'tool'>;
}

/** When set, this process also exports the saga-log gauges (SAGA_LOG_GAUGES; off by default here). */
export interface WorkerSagaLogGauges {
  readonly db: SagaDb;
  readonly cacheMs: number;
  readonly logger?: Logger;
}

export function createWorkerMetrics(
  role: 'relay' | 'executor',
  sagaLogGauges?: WorkerSagaLogGauges,
): WorkerMetrics {
  const registry = createRoleRegistry(
    role,
    sagaLogGauges && {
      db: sagaLogGauges.db,
      cacheMs: sagaLogGauges.cacheMs,
      ...(sagaLogGauges.logger ? { logger: sagaLogGauges.logger } : {}),
    },
  );
  return {
    registry,
    ...registerExecutionMetrics(registry),
    relayPublished: new Counter({
      name: 'saga_relay_published_total',
      help: 'Outbox rows published to BullMQ by the relay',
      registers: [registry],
    }),
    outboxLag: new Gauge({
      name: 'saga_outbox_lag_seconds',
      help: 'Age of the oldest unpublished outbox row at the last relay sweep',
      registers: [registry],
    }),
  };
}

/** The {@link ExecutionMetrics} on `registry`. */
export function registerExecutionMetrics(registry: Registry): ExecutionMetrics {
  return {
    executions: new Counter({
      name: 'saga_executions_total',
      help: 'Tool executions by tool and outcome',
      labelNames: ['tool', 'outcome'] as const,
      registers: [registry],
    }),
    toolLatency: new Histogram({
      name: 'saga_tool_duration_seconds',
      help: 'Time inside tool.execute, by tool and outcome',
      labelNames: ['tool', 'outcome'] as const,
      // From a no-op (sub-millisecond) to a slow vendor at its 30 s timeout.
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    settleLatency: new Histogram({
      name: 'saga_step_settle_duration_seconds',
      help: 'From the commit of a step intent to the executor recording its outcome, by tool and outcome',
      labelNames: ['tool', 'outcome'] as const,
      // From the fast path (a few ms) to a re-dispatch after the reconciler proved the first send absent.
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
      registers: [registry],
    }),
    attemptsPerEffect: attemptsPerEffectHistogram(registry),
    duplicateEffects: duplicateEffectCounter(registry),
  };
}
