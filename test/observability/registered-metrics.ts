import { parser } from '@prometheus-io/lezer-promql';
import { createCompensatorMetrics } from '@agent-saga/compensator';
import { createDb } from '@agent-saga/core';
import { createApiMetrics, createWorkerMetrics } from '@agent-saga/dispatcher';
import { createReconcilerMetrics } from '@agent-saga/reconciler';

/**
 * Every series name some role can export: the metric names of each role's registry, built the way its
 * entry point builds it with every optional collector on (`SAGA_LOG_GAUGES`), plus the `_bucket`, `_sum`
 * and `_count` series of histograms and summaries. Building the registries reads nothing: the database
 * pool behind them is never used (gauges read only when scraped), so no database is needed.
 */
export async function registeredSeriesNames(): Promise<ReadonlySet<string>> {
  const db = createDb({ url: 'postgres://unused@127.0.0.1:1/unused', schema: 'saga' });
  try {
    const sagaLogGauges = { db, cacheMs: 0 };
    const registries = [
      createApiMetrics(db).registry,
      createWorkerMetrics('relay', sagaLogGauges).registry,
      createWorkerMetrics('executor', sagaLogGauges).registry,
      createReconcilerMetrics(db, { stuckRunMs: 1, staleOutboxMs: 1, sagaLogGauges: true }).registry,
      createCompensatorMetrics(db, { sagaLogGauges: true }).registry,
    ];
    const names = new Set<string>();
    for (const registry of registries)
      for (const metric of registry.getMetricsAsArray()) {
        names.add(metric.name);
        const type = String(metric.type); // typed as an enum, a string at run time
        if (type === 'histogram') names.add(`${metric.name}_bucket`);
        if (type === 'histogram' || type === 'summary') {
          names.add(`${metric.name}_sum`);
          names.add(`${metric.name}_count`);
        }
      }
    return names;
  } finally {
    await db.destroy();
  }
}

/** The metric names a PromQL expression selects, and the parse errors in it (none for a valid one). */
export function metricsInExpr(expr: string): { readonly names: string[]; readonly errors: string[] } {
  const names: string[] = [];
  const errors: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError)
        errors.push(`at ${node.from}: ${JSON.stringify(expr.slice(node.from, node.to + 10))}`);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector')
        names.push(expr.slice(node.from, node.to));
    },
  });
  return { names, errors };
}
