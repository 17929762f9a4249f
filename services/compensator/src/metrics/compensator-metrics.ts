import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RunStatus, type SagaDb } from '@agent-saga/core';

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
  readonly manualInterventions: Counter<'kind'>;
}

/**
 * Creates the registry. Counters move as this process works, so a pool's totals are the sum over its
 * processes; the gauge reads the log when scraped (index `runs_open`: the cost follows the open runs).
 * Latency buckets: from a quick internal API (10 ms) to a tool timeout (30 s, the default).
 */
export function createCompensatorMetrics(db: SagaDb): CompensatorMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role: 'compensator' });
  collectDefaultMetrics({ register: registry });
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
    manualInterventions: new Counter({
      name: 'saga_compensator_manual_interventions_total',
      help: 'Items this compensator handed to a person, by kind',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
  };
}
