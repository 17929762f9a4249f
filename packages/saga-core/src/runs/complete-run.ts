import type { SagaTrx } from '../db/connect.js';
import type { RunRow } from '../db/schema.js';
import { InvalidRunTransitionError, RunNotRunningError, StepUnresolvedError } from '../errors/errors.js';
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
 * @throws StepUnresolvedError naming the first step that is not settled.
 * @throws RunNotRunningError when the run is in another status (compensating, terminal).
 */
export async function completeRun(trx: SagaTrx, tenantId: string, runId: string): Promise<RunRow> {
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
  try {
    return await transitionRun(trx, { runId, to: RunStatus.COMPLETED, reason: null });
  } catch (err) {
    if (err instanceof InvalidRunTransitionError) throw new RunNotRunningError(runId, run.status);
    throw err;
  }
}
