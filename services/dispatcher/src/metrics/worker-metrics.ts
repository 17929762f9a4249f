import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics of the relay and executor processes, on a registry of their own (the API keeps its
 * own in `api-metrics.ts`), so a process exposes exactly the series of its role.
 */
export interface WorkerMetrics {
  readonly registry: Registry;
  /** Executions by tool and outcome (`confirmed`, `failed`, `unknown`, `lease_expired`, `duplicate`…). */
  readonly executions: Counter<'tool' | 'outcome'>;
  /** Time spent inside `tool.execute`, by tool and outcome. */
  readonly toolLatency: Histogram<'tool' | 'outcome'>;
  /** Outbox rows the relay published to BullMQ. */
  readonly relayPublished: Counter;
  /** Age of the oldest outbox row still unpublished, in seconds (0 when none), as of the last sweep. */
  readonly outboxLag: Gauge;
}

export function createWorkerMetrics(role: 'relay' | 'executor'): WorkerMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role });
  collectDefaultMetrics({ register: registry });
  return {
    registry,
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
