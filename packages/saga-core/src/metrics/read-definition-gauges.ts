import { sql } from 'kysely';
import type { SagaDb } from '../db/connect.js';
import { RunStatus } from '../runs/run-status.js';
import { StepStatus, UNRESOLVED_STEP_STATUSES } from '../steps/step-status.js';
import { valuesOf } from '../util/values-of.js';
import { literals } from './sql-literals.js';

/** The label of unbound runs. */
export const UNBOUND_DEFINITION_LABEL = 'none';
/** The label of runs bound to a definition this process does not register (a retired one). */
export const OTHER_DEFINITION_LABEL = 'other';

/** What the definition gauges show for one label. */
export interface DefinitionTotals {
  /** Runs in each status now (every status present). */
  readonly runs: Map<RunStatus, number>;
  /** Moves into COMPENSATING ever: unwinds started. */
  unwinds: number;
  /** Moves into MANUAL_INTERVENTION ever: runs handed to a person. */
  manualInterventions: number;
  /** Steps whose outcome is UNKNOWN now. */
  unknownSteps: number;
  /** Invariant checks that failed, ever; of them restored since, and the seconds that took in all. */
  violations: number;
  restored: number;
  restoreSeconds: number;
  /** Failed invariants not restored yet. */
  openViolations: number;
}

/**
 * The label set is bounded by the code, not the data: `none` for unbound runs, each name `definitions`
 * registers, and `other` for any other name found in the database, so a stored name never mints a series.
 */
export function definitionLabeller(definitions: readonly string[]): (name: string | null) => string {
  const known = new Set(definitions);
  return (name) =>
    name === null || name === '' ? UNBOUND_DEFINITION_LABEL : known.has(name) ? name : OTHER_DEFINITION_LABEL;
}

/**
 * Every gauge of runs by definition, in five small reads, none over the history (issue 10):
 * - runs by status and moves into COMPENSATING and MANUAL_INTERVENTION from `definition_run_counts`
 *   (migration 0015, kept by triggers); the unbound runs by status are `run_status_counts` (0008) minus
 *   the bound ones, so nothing new is written when an unbound run is created;
 * - UNKNOWN steps with the predicate of the partial index `saga_log_unsettled`, each joined to its run by
 *   primary key: the cost follows the unknown steps;
 * - invariant violations from `invariant_violation_counts` and, open, through `invariant_violations_open`.
 */
export async function readDefinitionTotals(
  db: SagaDb,
  definitions: readonly string[],
): Promise<ReadonlyMap<string, DefinitionTotals>> {
  const label = definitionLabeller(definitions);
  const out = new Map<string, DefinitionTotals>();
  const of = (name: string | null): DefinitionTotals => {
    const l = label(name);
    let t = out.get(l);
    if (!t) {
      t = {
        runs: new Map(valuesOf(RunStatus).map((s) => [s, 0])),
        unwinds: 0,
        manualInterventions: 0,
        unknownSteps: 0,
        violations: 0,
        restored: 0,
        restoreSeconds: 0,
        openViolations: 0,
      };
      out.set(l, t);
    }
    return t;
  };
  for (const name of [UNBOUND_DEFINITION_LABEL, ...definitions])
    of(name === UNBOUND_DEFINITION_LABEL ? null : name);

  const [all, bound, unknown, violations, open] = await Promise.all([
    sql<{ status: RunStatus; n: number }>`
      SELECT status, sum(runs)::float8 AS n FROM run_status_counts GROUP BY status`.execute(db),
    sql<{ definition: string; status: RunStatus; runs: number; entered: number }>`
      SELECT definition, status, sum(runs)::float8 AS runs, sum(entered)::float8 AS entered
        FROM definition_run_counts GROUP BY definition, status`.execute(db),
    sql<{ definition: string | null; n: number }>`
      SELECT r.definition_name AS definition, count(*)::float8 AS n
        FROM saga_log s JOIN runs r ON r.run_id = s.run_id
       WHERE s.status IN (${literals(UNRESOLVED_STEP_STATUSES)}) AND s.status = ${sql.lit(StepStatus.UNKNOWN)}
       GROUP BY r.definition_name`.execute(db),
    sql<{ definition: string; violations: number; restored: number; seconds: number }>`
      SELECT definition, violations::float8, restored::float8, restore_seconds AS seconds
        FROM invariant_violation_counts`.execute(db),
    sql<{ definition: string; n: number }>`
      SELECT definition_name AS definition, count(*)::float8 AS n
        FROM invariant_violations WHERE restored_at IS NULL GROUP BY definition_name`.execute(db),
  ]);

  const unbound = of(null);
  for (const r of all.rows) unbound.runs.set(r.status, (unbound.runs.get(r.status) ?? 0) + r.n);
  for (const r of bound.rows) {
    const t = of(r.definition === '' ? null : r.definition);
    if (r.definition !== '') {
      t.runs.set(r.status, (t.runs.get(r.status) ?? 0) + r.runs);
      unbound.runs.set(r.status, (unbound.runs.get(r.status) ?? 0) - r.runs);
    }
    if (r.status === RunStatus.COMPENSATING) t.unwinds += r.entered;
    if (r.status === RunStatus.MANUAL_INTERVENTION) t.manualInterventions += r.entered;
  }
  for (const r of unknown.rows) of(r.definition).unknownSteps += r.n;
  for (const r of violations.rows) {
    const t = of(r.definition);
    t.violations += r.violations;
    t.restored += r.restored;
    t.restoreSeconds += r.seconds;
  }
  for (const r of open.rows) of(r.definition).openViolations += r.n;
  return out;
}
