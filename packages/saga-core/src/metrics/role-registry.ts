import { collectDefaultMetrics, Registry } from 'prom-client';
import type { SagaDb } from '../db/connect.js';
import { registerSagaLogGauges, type SagaLogGaugesOptions } from './saga-log-gauges.js';

/**
 * The registry every worker role (relay, executor, reconciler, compensator) starts its metrics from: the
 * `role` label on every series, Node's default process metrics, and the saga-log gauges when this role is
 * asked to export them (`sagaLogGauges`: the pool and the gauges' options; SAGA_LOG_GAUGES decides). The
 * role then adds its own counters to it.
 */
export function createRoleRegistry(
  role: string,
  sagaLogGauges?: SagaLogGaugesOptions & { readonly db: SagaDb },
): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ role });
  collectDefaultMetrics({ register: registry });
  if (sagaLogGauges) {
    const { db, ...opts } = sagaLogGauges;
    registerSagaLogGauges(registry, db, opts);
  }
  return registry;
}
