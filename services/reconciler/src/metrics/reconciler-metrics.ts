import type { Histogram } from 'prom-client';
import { Counter, type Registry } from 'prom-client';
import {
  attemptsPerEffectHistogram,
  duplicateEffectCounter,
  createRoleRegistry,
  type Logger,
  type SagaDb,
} from '@agent-saga/core';

/** How a reconcile of one step ended (the `outcome` label). */
export const ReconcileOutcome = {
  /** Found: CONFIRMED with the effect. */
  CONFIRMED: 'confirmed',
  /** Proved absent: NOT_EXECUTED (and re-dispatched when the run is still going forward). */
  NOT_EXECUTED: 'not_executed',
  /** Found refused under the key (`RefusedUnderKey`), once believable: FAILED, nothing sent again. */
  FAILED: 'failed',
  /** Not found yet, within the tool's lookup lag: looked at again later. */
  AWAITING_LAG: 'awaiting_lag',
  /** The lookup failed: backoff. */
  LOOKUP_ERROR: 'lookup_error',
  /** Past the retry budget or the age limit: a person must settle it. */
  MANUAL_INTERVENTION: 'manual_intervention',
  /** The step moved (executor, API, another reconciler) while it was looked up: nothing written. */
  SUPERSEDED: 'superseded',
} as const;
export type ReconcileOutcome = (typeof ReconcileOutcome)[keyof typeof ReconcileOutcome];

/** The Prometheus metrics of a reconciler process, on a registry of its own. */
export interface ReconcilerMetrics {
  readonly registry: Registry;
  readonly results: Counter<'tool' | 'outcome'>;
  /** Lookups that threw or timed out. */
  readonly lookupErrors: Counter<'tool'>;
  /** Lookups that found more than one effect under one key. */
  readonly duplicateEffects: Counter<'tool'>;
  /** NOT_EXECUTED steps sent again with the same key and stored arguments. */
  readonly redispatched: Counter<'tool'>;
  /** Unclaimed intents published again under a fresh job id (their job was lost). */
  readonly republished: Counter<'tool'>;
  /** Attempts the executors had sent by the time a lookup found the effect (retry amplification). */
  readonly attemptsPerEffect: Histogram<'tool'>;
}

export interface ReconcilerMetricsOptions {
  /** Thresholds of `saga_stuck_runs` and `saga_stale_outbox_messages` (RECONCILER_STUCK_RUN_MS, …). */
  readonly stuckRunMs: number;
  readonly staleOutboxMs: number;
  /** Export the saga-log gauges from this process (SAGA_LOG_GAUGES; on by default for the reconciler). */
  readonly sagaLogGauges?: boolean;
  /** SAGA_LOG_GAUGES_CACHE_MS. */
  readonly sagaLogGaugesCacheMs?: number;
  readonly logger?: Logger;
}

/**
 * Creates the registry. Counters move as steps are reconciled. The gauges read from the saga log (stuck
 * runs, stale outbox messages, UNKNOWN steps and their age, runs by status, approvals, …) are the shared
 * collector of `@agent-saga/core` (`registerSagaLogGauges`), exported here unless SAGA_LOG_GAUGES is off:
 * the reconciler is the role that runs it by default, so the other pools do not repeat its queries.
 */
export function createReconcilerMetrics(db: SagaDb, o: ReconcilerMetricsOptions): ReconcilerMetrics {
  const registry = createRoleRegistry(
    'reconciler',
    (o.sagaLogGauges ?? true)
      ? {
          db,
          stuckRunMs: o.stuckRunMs,
          staleOutboxMs: o.staleOutboxMs,
          cacheMs: o.sagaLogGaugesCacheMs ?? 0,
          ...(o.logger ? { logger: o.logger } : {}),
        }
      : undefined,
  );
  return {
    registry,
    results: new Counter({
      name: 'saga_reconcile_results_total',
      help: 'Reconciles of one step, by tool and outcome',
      labelNames: ['tool', 'outcome'] as const,
      registers: [registry],
    }),
    lookupErrors: new Counter({
      name: 'saga_reconcile_lookup_errors_total',
      help: 'Lookups by key that threw or timed out, by tool',
      labelNames: ['tool'] as const,
      registers: [registry],
    }),
    duplicateEffects: duplicateEffectCounter(registry),
    redispatched: new Counter({
      name: 'saga_reconcile_redispatched_total',
      help: 'NOT_EXECUTED steps re-dispatched with the same key and stored arguments, by tool',
      labelNames: ['tool'] as const,
      registers: [registry],
    }),
    republished: new Counter({
      name: 'saga_unclaimed_intents_republished_total',
      help: 'INTENDED steps unclaimed past SAGA_UNCLAIMED_REPUBLISH_MS, published again under a fresh job id, by tool',
      labelNames: ['tool'] as const,
      registers: [registry],
    }),
    attemptsPerEffect: attemptsPerEffectHistogram(registry),
  };
}
