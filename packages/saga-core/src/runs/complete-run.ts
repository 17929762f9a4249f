import type { SagaDb, SagaTrx } from '../db/connect.js';
import type { RunRow } from '../db/schema.js';
import {
  InvalidRunTransitionError,
  InvariantUnverifiedError,
  RunNotRunningError,
  StepUnresolvedError,
} from '../errors/errors.js';
import {
  checkRunInvariant,
  type InvariantCheck,
  type InvariantChecker,
} from '../sagas/check-run-invariant.js';
import { gateOnInvariant } from '../sagas/gate-on-invariant.js';
import { RunStatus } from './run-status.js';
import { StepStatus } from '../steps/step-status.js';
import { lockRun } from './run-rows.js';
import { transitionRun } from './transition-run.js';

/**
 * Step statuses that end a step for good in the forward direction: a run may complete only when every
 * step is in one of these. AWAITING_APPROVAL, INTENDED, UNKNOWN and MANUAL_INTERVENTION are not.
 */
const FINAL_FORWARD = new Set<StepStatus>([
  StepStatus.CONFIRMED,
  StepStatus.FAILED,
  StepStatus.NOT_EXECUTED,
  StepStatus.REJECTED,
]);

/**
 * Finishes a run forward, in the caller's transaction: RUNNING → COMPLETED by compare-and-set, once every
 * step is settled. A run already COMPLETED is answered as it is.
 *
 * A run bound to a definition with an invariant ends only on a `check` made before this transaction
 * (`checkRunInvariant`, see {@link completeCheckedRun}) about the steps as they stand under the lock:
 * - it holds: COMPLETED;
 * - it fails: MANUAL_INTERVENTION with the clause in `statusReason` and a case. Not COMMITTED_WITH_REPAIR,
 *   which says the run finished forward after its own repairs: here the real systems contradict the log,
 *   and only a person can tell which effect to restore (nothing was unwound; `resume` or `unwind` the run
 *   from the case once it is understood, and the next check records the time it took to restore);
 * - no check, one that could not answer, or one about other steps: {@link InvariantUnverifiedError}
 *   (503), nothing moves. Answering the agent "try again" rather than handing an unreachable vendor to a
 *   person: the run is still RUNNING and whole, and a vendor outage is not a business failure.
 * An unbound run ends as it always did, whatever `check` says.
 * @throws StepUnresolvedError naming the first step that is not settled.
 * @throws RunNotRunningError when the run is in another status (compensating, terminal).
 */
export async function completeRun(
  trx: SagaTrx,
  tenantId: string,
  runId: string,
  check?: InvariantCheck,
): Promise<RunRow> {
  const run = await lockRun(trx, tenantId, runId);
  if (run.status === RunStatus.COMPLETED) return run;
  const open = await trx
    .selectFrom('saga_log')
    .select(['step_idx', 'tool', 'status'])
    .where('run_id', '=', runId)
    .where('status', 'not in', [...FINAL_FORWARD])
    .orderBy('step_idx')
    .limit(1)
    .executeTakeFirst();
  if (open)
    throw new StepUnresolvedError(
      open.step_idx,
      `step ${open.step_idx} (${open.tool}) is ${open.status}; a run completes only when every step is settled`,
    );
  if (run.status !== RunStatus.RUNNING) throw new RunNotRunningError(runId, run.status);
  const gate = await gateOnInvariant(trx, run, RunStatus.COMPLETED, check);
  if (gate.kind === 'recheck')
    throw new InvariantUnverifiedError(runId, gate.definition, gate.why, gate.stale);
  const [to, reason] =
    gate.kind === 'violated' ? [RunStatus.MANUAL_INTERVENTION, gate.reason] : [RunStatus.COMPLETED, null];
  try {
    return await transitionRun(trx, { runId, to, onlyFrom: [RunStatus.RUNNING], reason });
  } catch (err) {
    if (err instanceof InvalidRunTransitionError) throw new RunNotRunningError(runId, run.status);
    throw err;
  }
}

/** Why 3: a check goes stale only when a step moved meanwhile; three in a row is a run still busy. */
const STALE_CHECKS = 3;

/**
 * {@link completeRun} with its invariant checked first, outside the transaction (the lookups are slow HTTP
 * reads and must not hold the run's lock): check, then end the run by compare-and-set on what was checked.
 * A check that went stale (a step moved meanwhile) is made again, up to {@link STALE_CHECKS} times. An
 * unbound run costs one read of its row more than `completeRun` alone.
 */
export async function completeCheckedRun(
  db: SagaDb,
  tenantId: string,
  runId: string,
  checker: InvariantChecker | undefined,
): Promise<RunRow> {
  for (let attempt = 1; ; attempt++) {
    const check = await checkRunInvariant(db, { runId, tenantId }, RunStatus.COMPLETED, checker);
    try {
      return await db.transaction().execute((trx) => completeRun(trx, tenantId, runId, check));
    } catch (err) {
      if (!(err instanceof InvariantUnverifiedError && err.stale && attempt < STALE_CHECKS)) throw err;
    }
  }
}
