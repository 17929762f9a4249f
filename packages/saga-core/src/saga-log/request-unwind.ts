import { sql } from 'kysely';
import type { SagaTrx } from '../db/connect.js';
import type { RunRow } from '../db/schema.js';
import { InvalidRunTransitionError, PivotStagedError, RunNotRunningError } from '../errors.js';
import { lockLivePivot } from '../approvals/lock-pivot.js';
import { closeApproval, refuseApprovedSteps } from '../approvals/settle-approval.js';
import { ApprovalStatus, RunStatus } from '../statuses.js';
import { lockRun } from './runs.js';
import { transitionRun } from './transition-run.js';

/** How `requestUnwind` prefixes the reason it keeps in the run's `status_reason` while it is COMPENSATING. */
const UNWIND_REASON_PREFIX = 'unwind requested: ';

/**
 * Why a COMPENSATING run is being unwound, read back from its `status_reason` (the run row is the only place
 * the reason is kept): the words of whoever asked, without {@link requestUnwind}'s prefix; a reason written
 * by another path (a rejected pivot, a retried case) as it stands; null when there is none.
 */
export function unwindReasonOf(statusReason: string | null): string | null {
  const reason = statusReason?.startsWith(UNWIND_REASON_PREFIX)
    ? statusReason.slice(UNWIND_REASON_PREFIX.length)
    : statusReason;
  return reason?.trim() ? reason.trim() : null;
}

/** The NOTIFY channel that wakes compensators when a run starts to unwind (payload: the run id). */
export function unwindChannel(schema: string): string {
  return `saga_unwind_${schema}`;
}

export interface UnwindRequest {
  readonly tenantId: string;
  readonly runId: string;
  /** Why, in the words of whoever asked (agent, operator, run policy); kept in `status_reason`. */
  readonly reason: string;
  readonly schema: string;
}

/**
 * Starts the unwind of a run, in the caller's transaction: lock the run, move it to COMPENSATING by
 * compare-and-set (RUNNING or AWAITING_APPROVAL only, see `RUN_TRANSITIONS`), and NOTIFY the compensators.
 * The run's status is the durable request: a compensator that misses the NOTIFY finds the run on its
 * sweep of COMPENSATING runs, so nothing is lost between this commit and the compensator's queue.
 *
 * A run already COMPENSATING is answered as it is (an unwind asked twice is one unwind).
 * @throws NotFoundError for another tenant's or a missing run.
 * @throws RunNotRunningError for a run in a terminal status.
 * @throws PivotStagedError for a run whose pivot was approved (it only rolls forward).
 */
export async function requestUnwind(trx: SagaTrx, u: UnwindRequest): Promise<RunRow> {
  const run = await lockRun(trx, u.tenantId, u.runId);
  if (run.status === RunStatus.COMPENSATING) return run;
  const pivot = await lockLivePivot(trx, u.runId);
  // After its pivot a run only rolls forward: an approved pivot is never rolled back by an unwind.
  if (pivot?.status === ApprovalStatus.APPROVED) throw new PivotStagedError(u.runId, pivot.id);
  if (pivot) {
    // Unwound while its pivot waits: the proposal is withdrawn, its commit steps never run.
    const closed = await closeApproval(trx, {
      approval: pivot,
      to: ApprovalStatus.SUPERSEDED,
      actor: null,
      comment: `the run was unwound before anyone decided: ${u.reason}`,
    });
    if (closed) await refuseApprovedSteps(trx, closed, ApprovalStatus.SUPERSEDED, null, u.schema);
  }
  try {
    const row = await transitionRun(trx, {
      runId: u.runId,
      to: RunStatus.COMPENSATING,
      reason: `${UNWIND_REASON_PREFIX}${u.reason}`,
    });
    await sql`SELECT pg_notify(${unwindChannel(u.schema)}, ${u.runId})`.execute(trx);
    return row;
  } catch (err) {
    if (err instanceof InvalidRunTransitionError) throw new RunNotRunningError(u.runId, run.status);
    throw err;
  }
}
