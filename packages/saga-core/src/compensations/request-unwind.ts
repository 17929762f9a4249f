import type { SagaTrx } from '../db/connect.js';
import type { RunRow } from '../db/schema.js';
import { InvalidRunTransitionError, PivotStagedError, RunNotRunningError } from '../errors/errors.js';
import { lockLivePivot } from '../review/pivot/lock-pivot.js';
import { withdrawPendingApprovals } from '../review/approvals/withdraw-pending-approvals.js';
import { ApprovalStatus } from '../review/approvals/approval-status.js';
import { RunStatus } from '../runs/run-status.js';
import { lockRun } from '../runs/run-rows.js';
import { transitionRun } from '../runs/transition-run.js';
import { wakeCompensators } from './wake-compensators.js';
import { withdrawUnclaimedSteps } from '../steps/claim/withdraw-unclaimed-steps.js';

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

export interface UnwindRequest {
  readonly tenantId: string;
  readonly runId: string;
  /** Why, in the words of whoever asked (agent, operator, run policy); kept in `status_reason`. */
  readonly reason: string;
  readonly schema: string;
}

/**
 * Starts the unwind of a run, in the caller's transaction: lock the run, move it to COMPENSATING by
 * compare-and-set (RUNNING or AWAITING_APPROVAL only, see `RUN_TRANSITIONS`), and NOTIFY the compensators
 * (see {@link startUnwind}, which also withdraws what waits: a pending pivot is superseded, its commit steps
 * never run, and so is any held step's approval).
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
  try {
    return await startUnwind(trx, {
      runId: u.runId,
      reason: `${UNWIND_REASON_PREFIX}${u.reason}`,
      schema: u.schema,
    });
  } catch (err) {
    if (err instanceof InvalidRunTransitionError) throw new RunNotRunningError(u.runId, run.status);
    throw err;
  }
}

export interface StartUnwindInput {
  readonly runId: string;
  /** The run's `status_reason` while it compensates (read back by {@link unwindReasonOf}). */
  readonly reason: string;
  /** Narrows the legal sources of COMPENSATING further (e.g. only RUNNING). */
  readonly onlyFrom?: readonly RunStatus[];
  readonly actor?: string | null;
  /** Why what waited was withdrawn, on each approval and step event; default `withdrawn: run unwound: <reason>`. */
  readonly withdrawnBecause?: string;
  readonly schema: string;
}

/**
 * Moves a run to COMPENSATING and withdraws everything of it still waiting to go forward, in the caller's
 * transaction (which holds the run's lock, or takes it here), all in one commit:
 *
 * 1. the run RUNNING / AWAITING_APPROVAL / MANUAL_INTERVENTION → COMPENSATING by compare-and-set
 *    (`transitionRun`; zero rows throws InvalidRunTransitionError before anything else is written);
 * 2. every pending approval, of any kind, is closed `superseded` and its held steps become REJECTED
 *    (`withdrawPendingApprovals`): nobody can approve an irreversible call of an unwound run;
 * 3. every forward step on its way that no executor has claimed is withdrawn (`withdrawUnclaimedSteps`):
 *    NOT_EXECUTED when it was never sent, UNKNOWN when it was re-dispatched after an earlier send that may
 *    still commit (the compensator looks it up by key before it concludes anything); a job still in the
 *    queue sends nothing;
 * 4. NOTIFY the compensators (`wakeCompensators`).
 *
 * Every path that unwinds a run goes through here (an unwind asked for, a rejected or expired pivot, the
 * run policy `unwindOnFailure`, a compensation retried from a case), so each keeps this rule without a copy.
 */
export async function startUnwind(trx: SagaTrx, u: StartUnwindInput): Promise<RunRow> {
  const row = await transitionRun(trx, {
    runId: u.runId,
    to: RunStatus.COMPENSATING,
    reason: u.reason,
    ...(u.onlyFrom ? { onlyFrom: u.onlyFrom } : {}),
    actor: u.actor ?? null,
  });
  const why =
    u.withdrawnBecause ?? `withdrawn: run unwound: ${unwindReasonOf(u.reason) ?? 'no reason given'}`;
  await withdrawPendingApprovals(trx, {
    runId: u.runId,
    why,
    actor: u.actor ?? null,
    schema: u.schema,
  });
  await withdrawUnclaimedSteps(trx, { runId: u.runId, why, schema: u.schema });
  await wakeCompensators(trx, u.schema, u.runId);
  return row;
}
