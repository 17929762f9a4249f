import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { SagaDb } from '@agent-saga/core';
import { findStaleOutbox, findStuckRuns, findUnknownSteps } from '../scan/find-stuck-work.js';

/** How a reconcile of one step ended (the `outcome` label). */
export const ReconcileOutcome = {
  /** Found: CONFIRMED with the effect. */
  CONFIRMED: 'confirmed',
  /** Proved absent: NOT_EXECUTED (and re-dispatched when the run is still going forward). */
  NOT_EXECUTED: 'not_executed',
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
}

export interface MetricThresholds {
  readonly stuckRunMs: number;
  readonly staleOutboxMs: number;
}

/**
 * Creates the registry. Counters move as steps are reconciled; the gauges read the saga log when scraped
 * (through partial indexes, so a scrape costs what is unsettled, not the log's size): stuck runs, stale
 * outbox messages, UNKNOWN steps and the age of the oldest.
 */
export function createReconcilerMetrics(db: SagaDb, t: MetricThresholds): ReconcilerMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role: 'reconciler' });
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'saga_stuck_runs',
    help: 'Runs in a non-terminal state with no change for RECONCILER_STUCK_RUN_MS',
    registers: [registry],
    async collect() {
      this.set((await findStuckRuns(db, t.stuckRunMs)).count);
    },
  });
  new Gauge({
    name: 'saga_stale_outbox_messages',
    help: 'Outbox messages unpublished for longer than RECONCILER_STALE_OUTBOX_MS',
    registers: [registry],
    async collect() {
      this.set((await findStaleOutbox(db, t.staleOutboxMs)).count);
    },
  });
  new Gauge({
    name: 'saga_unknown_steps',
    help: 'Steps whose outcome is UNKNOWN',
    registers: [registry],
    async collect() {
      this.set((await findUnknownSteps(db)).count);
    },
  });
  new Gauge({
    name: 'saga_unknown_step_oldest_age_seconds',
    help: 'Seconds since the last attempt of the oldest UNKNOWN step was sent (0 when none)',
    registers: [registry],
    async collect() {
      this.set((await findUnknownSteps(db)).oldestAgeSeconds);
    },
  });
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
    duplicateEffects: new Counter({
      name: 'saga_duplicate_effect_incidents_total',
      help: 'Lookups that found more than one effect under one idempotency key, by tool',
      labelNames: ['tool'] as const,
      registers: [registry],
    }),
    redispatched: new Counter({
      name: 'saga_reconcile_redispatched_total',
      help: 'NOT_EXECUTED steps re-dispatched with the same key and stored arguments, by tool',
      labelNames: ['tool'] as const,
      registers: [registry],
    }),
  };
}
