import type { SagaTrx } from '../../db/connect.js';
import type { RunRow } from '../../db/schema.js';
import { RunStatus } from '../../runs/run-status.js';
import { transitionRun } from '../../runs/transition-run.js';
import { withdrawUnclaimedSteps } from '../../steps/claim/withdraw-unclaimed-steps.js';
import { withdrawPendingApprovals } from '../approvals/withdraw-pending-approvals.js';
import { openCase } from './open-case.js';

export interface StopForPersonInput {
  readonly runId: string;
  readonly tenantId: string;
  /** The run's new status reason and its case's first line: why a person must take over. */
  readonly reason: string;
  readonly evidence: Record<string, unknown>;
  /** The statuses the run may be stopped from (the caller's rule; each must be a legal source). */
  readonly onlyFrom: readonly RunStatus[];
  readonly actor?: string | null;
  readonly schema: string;
}

/**
 * Stops a run that the harness may not carry on by itself, in the caller's transaction (which holds the
 * run's lock): it ends MANUAL_INTERVENTION with one open case for the whole run, and nothing more of it is
 * sent or decided.
 *
 * 1. the run → MANUAL_INTERVENTION by compare-and-set from `onlyFrom` (zero rows throws
 *    InvalidRunTransitionError before anything else is written);
 * 2. every pending approval of the run is withdrawn (`superseded`, its held steps REJECTED, its held
 *    compensation failed): nobody can release a send of a stopped run;
 * 3. every forward step on its way that no executor has claimed is withdrawn (`withdrawUnclaimedSteps`):
 *    NOT_EXECUTED when it was never sent, UNKNOWN when an earlier send under its key may still commit (the
 *    reconciler settles it by lookup, so the person finds its outcome in the log, not a guess);
 * 4. the case, with `reason` and `evidence`.
 *
 * The one home of "stop for a person" for the rules that need it: a renewal of the run's authority that a
 * person rejected or that expired, and a run past its deadline whose policy does not unwind it.
 */
export async function stopForPerson(trx: SagaTrx, s: StopForPersonInput): Promise<RunRow> {
  const row = await transitionRun(trx, {
    runId: s.runId,
    to: RunStatus.MANUAL_INTERVENTION,
    onlyFrom: s.onlyFrom,
    reason: `needs a person: ${s.reason}`,
    actor: s.actor ?? null,
  });
  const why = `withdrawn: run stopped for a person: ${s.reason}`;
  await withdrawPendingApprovals(trx, { runId: s.runId, why, actor: s.actor ?? null, schema: s.schema });
  await withdrawUnclaimedSteps(trx, { runId: s.runId, why, schema: s.schema });
  await openCase(trx, {
    runId: s.runId,
    stepIdx: null,
    tenantId: s.tenantId,
    reason: s.reason,
    evidence: s.evidence,
  });
  return row;
}
