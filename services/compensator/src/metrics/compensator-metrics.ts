import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import {
  duplicateEffectCounter,
  ATTEMPTS_PER_EFFECT_BUCKETS,
  createRoleRegistry,
  RunStatus,
  type Logger,
  type SagaDb,
} from '@agent-saga/core';

/** How one pass over a compensation ended (the `outcome` label of `saga_compensations_total`). */
export const CompensationOutcome = {
  /** Sent, and the tool returned: undone. */
  COMPENSATED: 'compensated',
  /** Found done by the lookup by the compensation key (an earlier attempt, a crashed peer): nothing sent. */
  FOUND_BY_KEY: 'found_by_key',
  /** The forward tool's precondition saw the target already in the compensated state: nothing sent. */
  ALREADY_COMPENSATED: 'already_compensated',
  /** Sent and refused: retried with the same key after a backoff. */
  REFUSED: 'refused',
  /** Sent and nobody knows whether it took effect: looked up by key next time. */
  UNKNOWN: 'unknown',
  /** The precondition saw the target changed otherwise: nothing sent, a person decides. */
  TARGET_CHANGED: 'target_changed',
  /** Past the attempt budget, or the command cannot be made: a person must look. */
  GAVE_UP: 'gave_up',
} as const;
export type CompensationOutcome = (typeof CompensationOutcome)[keyof typeof CompensationOutcome];

/** What needed a person (the `kind` label of `saga_compensator_manual_interventions_total`). */
export const ManualInterventionKind = {
  /** A forward step stayed unknown past its wait: never compensated blindly. */
  STEP_UNKNOWN: 'step_unknown',
  /** A compensation gave up (budget, unresolvable command, changed target, unknown with failing lookups). */
  COMPENSATION: 'compensation',
} as const;
export type ManualInterventionKind = (typeof ManualInterventionKind)[keyof typeof ManualInterventionKind];

/** The Prometheus metrics of a compensator process, on a registry of its own. */
export interface CompensatorMetrics {
  readonly registry: Registry;
  /** Runs this process brought to a terminal state, by that state. */
  readonly runsFinished: Counter<'status'>;
  readonly compensations: Counter<'tool' | 'outcome'>;
  /** Duration of one sent compensation attempt (the tool call), by tool and whether it returned. */
  readonly latency: Histogram<'tool' | 'ok'>;
  /** From the compensation's planning (the unwind reached its step) to its confirmation, by tool. */
  readonly settleLatency: Histogram<'tool'>;
  /** Attempts sent (same key each time) by the time a compensation was confirmed, by tool. */
  readonly attemptsPerEffect: Histogram<'tool'>;
  readonly manualInterventions: Counter<'kind'>;
  /** A lookup or a call that found more than one effect under one key (forward or compensation). */
  readonly duplicateEffects: Counter<'tool'>;
}

export interface CompensatorMetricsOptions {
  /** Export the saga-log gauges from this process too (SAGA_LOG_GAUGES; off by default here). */
  readonly sagaLogGauges?: boolean;
  readonly sagaLogGaugesCacheMs?: number;
  readonly logger?: Logger;
}

/**
 * Creates the registry. Counters move as this process works, so a pool's totals are the sum over its
 * processes; the gauge reads the log when scraped (index `runs_open`: the cost follows the open runs).
 * Latency buckets: from a quick internal API (10 ms) to a tool timeout (30 s, the default); the settle
 * latency, which spans backoffs and lookup lags, reaches an hour.
 */
export function createCompensatorMetrics(db: SagaDb, o: CompensatorMetricsOptions = {}): CompensatorMetrics {
  const registry = createRoleRegistry(
    'compensator',
    o.sagaLogGauges
      ? { db, cacheMs: o.sagaLogGaugesCacheMs ?? 0, ...(o.logger ? { logger: o.logger } : {}) }
      : undefined,
  );
  new Gauge({
    name: 'saga_compensating_runs',
    help: 'Runs in COMPENSATING (being unwound, by any compensator)',
    registers: [registry],
    async collect() {
      const r = await db
        .selectFrom('runs')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('status', '=', RunStatus.COMPENSATING)
        .executeTakeFirst();
      this.set(Number(r?.n ?? 0));
    },
  });
  return {
    registry,
    runsFinished: new Counter({
      name: 'saga_compensator_runs_finished_total',
      help: 'Unwinds this compensator brought to a terminal state, by terminal run status',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    compensations: new Counter({
      name: 'saga_compensations_total',
      help: 'Passes over one compensation that moved it, by compensation tool and outcome',
      labelNames: ['tool', 'outcome'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'saga_compensation_duration_seconds',
      help: 'Duration of one sent compensation attempt, by compensation tool and whether it returned',
      labelNames: ['tool', 'ok'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    settleLatency: new Histogram({
      name: 'saga_compensation_settle_duration_seconds',
      help: 'From the planning of a compensation to its confirmation (attempts, backoffs, lookups), by tool',
      labelNames: ['tool'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
      registers: [registry],
    }),
    attemptsPerEffect: new Histogram({
      name: 'saga_compensation_attempts_per_effect',
      help: 'Attempts sent for a compensation by the time it was confirmed, by tool (retry amplification)',
      labelNames: ['tool'] as const,
      // COMPENSATION_MAX_ATTEMPTS (5 by default) is where a person takes over.
      buckets: [...ATTEMPTS_PER_EFFECT_BUCKETS],
      registers: [registry],
    }),
    manualInterventions: new Counter({
      name: 'saga_compensator_manual_interventions_total',
      help: 'Items this compensator handed to a person, by kind',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    duplicateEffects: duplicateEffectCounter(registry),
  };
}
