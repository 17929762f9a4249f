import { Counter, Gauge, type Registry } from 'prom-client';
import type { SagaDb } from '../db/connect.js';
import type { Logger } from '../process/logger.js';
import { readDefinitionTotals, type DefinitionTotals } from './read-definition-gauges.js';
import { sharedRead } from './shared-read.js';

export interface DefinitionGaugesOptions {
  /** The definition names this process registers: the only `definition` labels beside `none` and `other`. */
  readonly definitions: readonly string[];
  /** How long one read is reused across scrapes (0: once per scrape). */
  readonly cacheMs?: number;
  readonly logger?: Logger;
}

/**
 * Registers the gauges of runs segmented by saga definition, label `definition` (`none`: unbound runs;
 * `other`: a name this process does not register), read on each scrape in one shared read
 * (`readDefinitionTotals`: counters and partial indexes, never a scan of the log):
 *
 * - `saga_definition_runs{definition,status}`: runs by status (terminal counts only grow: rate them);
 * - `saga_definition_unwinds{definition}`, `saga_definition_manual_interventions{definition}`: moves into
 *   COMPENSATING and into MANUAL_INTERVENTION, ever (only grow);
 * - `saga_definition_unknown_steps{definition}`: steps whose outcome is UNKNOWN now;
 * - `saga_invariant_violations{definition}` (only grows), `saga_invariant_open_violations{definition}`,
 *   `saga_invariant_restored{definition}` and `saga_invariant_restore_seconds_sum{definition}`: failed
 *   invariant checks, those not restored yet, and how long restoring took (sum / restored is the mean
 *   time to restore; `increase()` of both over a window, the mean over the window).
 *
 * A failing read keeps the last values and counts `saga_definition_gauge_errors_total`.
 */
export function registerDefinitionGauges(
  registry: Registry,
  db: SagaDb,
  opts: DefinitionGaugesOptions,
): void {
  const registers = [registry];
  const errors = new Counter({
    name: 'saga_definition_gauge_errors_total',
    help: 'Reads of the definition gauges that failed (the gauges kept their last values)',
    registers,
  });
  const read = sharedRead(() => readDefinitionTotals(db, opts.definitions), opts.cacheMs ?? 0, {
    onDuration: () => undefined,
    onError: (err) => {
      errors.inc();
      opts.logger?.warn({ err }, 'definition gauge read failed; the gauges keep their last values');
    },
  });
  const perDefinition = (name: string, help: string, value: (t: DefinitionTotals) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['definition'] as const,
      registers,
      async collect() {
        const totals = await read();
        if (totals) for (const [definition, t] of totals) this.set({ definition }, value(t));
      },
    });
  };
  new Gauge({
    name: 'saga_definition_runs',
    help: 'Runs by saga definition and status (none: unbound); terminal counts only grow',
    labelNames: ['definition', 'status'] as const,
    registers,
    async collect() {
      const totals = await read();
      if (totals)
        for (const [definition, t] of totals)
          for (const [status, n] of t.runs) this.set({ definition, status }, n);
    },
  });
  perDefinition(
    'saga_definition_unwinds',
    'Runs moved into COMPENSATING, by saga definition (only grows)',
    (t) => t.unwinds,
  );
  perDefinition(
    'saga_definition_manual_interventions',
    'Runs moved into MANUAL_INTERVENTION, by saga definition (only grows)',
    (t) => t.manualInterventions,
  );
  perDefinition(
    'saga_definition_unknown_steps',
    'Steps whose outcome is UNKNOWN, by the saga definition of their run',
    (t) => t.unknownSteps,
  );
  perDefinition(
    'saga_invariant_violations',
    'Business invariants found failing at a run end, by saga definition (only grows)',
    (t) => t.violations,
  );
  perDefinition(
    'saga_invariant_open_violations',
    'Failed business invariants not restored yet, by saga definition',
    (t) => t.openViolations,
  );
  perDefinition(
    'saga_invariant_restored',
    'Failed business invariants found holding again by a later check, by saga definition (only grows)',
    (t) => t.restored,
  );
  perDefinition(
    'saga_invariant_restore_seconds_sum',
    'Seconds from each failed invariant to the check that found it holding again, summed (only grows)',
    (t) => t.restoreSeconds,
  );
}
