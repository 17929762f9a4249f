import type { CompensationRow } from '@agent-saga/core';
import { ManualInterventionKind, type CompensationOutcome } from '../metrics/compensator-metrics.js';
import type { UnwindDeps } from './unwind-deps.js';

/** Counts how a pass over a compensation of `tool` ended; a give-up also counts a manual intervention. */
export function countOutcome(
  d: UnwindDeps,
  tool: string,
  outcome: CompensationOutcome,
  needsPerson: boolean,
): void {
  d.metrics?.compensations.inc({ tool, outcome });
  if (needsPerson) d.metrics?.manualInterventions.inc({ kind: ManualInterventionKind.COMPENSATION });
}

/** Latency from planning to confirmation, and the attempts it took (none: found done, nothing sent). */
export function observeConfirmed(d: UnwindDeps, tool: string, row: CompensationRow): void {
  // A metric only (decides nothing): the process clock against the row's creation is close enough.
  d.metrics?.settleLatency.observe({ tool }, (Date.now() - row.created_at.getTime()) / 1000);
  if (row.attempts > 0) d.metrics?.attemptsPerEffect.observe({ tool }, row.attempts);
}
