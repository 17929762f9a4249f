import type { SagaTrx } from '../db/connect.js';
import type { RunRow } from '../db/schema.js';
import { openCase } from '../review/cases/open-case.js';
import { definitionLabel, readStepsSeen, type InvariantCheck } from './check-run-invariant.js';
import { recordInvariantRestored, recordInvariantViolation } from './record-invariant-outcome.js';
import type { InvariantEnding } from './saga-invariant.js';

/**
 * What the ending transaction may do with a run, given the invariant check made before it:
 * - `pass`: end it as planned (unbound, no invariant, or it holds; an open violation of it is restored);
 * - `violated`: the invariant failed; the violation and a case for a person (on the whole run) are written,
 *   and the caller moves the run to its failure status with `reason` (the clause in it);
 * - `recheck`: do not end it now (no check, a check that could not answer, or one about other steps).
 */
export type InvariantGate =
  | { readonly kind: 'pass' }
  | { readonly kind: 'violated'; readonly reason: string; readonly clause: string }
  | { readonly kind: 'recheck'; readonly definition: string; readonly why: string; readonly stale: boolean };

/**
 * Applies an invariant check in the transaction that ends `run` (locked by the caller): an unbound run
 * passes whatever the check says, so its ending is exactly what it always was. For a bound run, the check
 * must be about the steps as they stand under the lock (`readStepsSeen`), else it is `recheck`, stale.
 */
export async function gateOnInvariant(
  trx: SagaTrx,
  run: RunRow,
  ending: InvariantEnding,
  check: InvariantCheck | undefined,
): Promise<InvariantGate> {
  if (run.definition_name === null || run.definition_version === null) return { kind: 'pass' };
  const label = definitionLabel({ name: run.definition_name, version: run.definition_version });
  if (!check || check.kind === 'unbound')
    return { kind: 'recheck', definition: label, why: 'the invariant was not checked', stale: false };
  if (check.kind === 'no_invariant') return { kind: 'pass' };
  if (check.kind === 'unanswered')
    return { kind: 'recheck', definition: label, why: check.why, stale: false };
  if (check.ending !== ending || check.seen !== (await readStepsSeen(trx, run.run_id)))
    return {
      kind: 'recheck',
      definition: label,
      why: 'the steps changed after the check; it is made again',
      stale: true,
    };
  if (check.kind === 'holds') {
    await recordInvariantRestored(trx, run.run_id);
    return { kind: 'pass' };
  }
  const reason = `invariant of ${label} failed: ${check.clause}`;
  await recordInvariantViolation(trx, {
    runId: run.run_id,
    tenantId: run.tenant_id,
    definition: check.definition,
    ending,
    clause: check.clause,
  });
  await openCase(trx, {
    runId: run.run_id,
    stepIdx: null,
    tenantId: run.tenant_id,
    reason: `${reason}; the real systems do not show what the run's end claims: restore it by hand`,
    evidence: { definition: label, ending, clause: check.clause },
  });
  return { kind: 'violated', reason, clause: check.clause };
}
