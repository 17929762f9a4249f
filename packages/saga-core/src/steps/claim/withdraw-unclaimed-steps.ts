import type { SagaTrx } from '../../db/connect.js';
import { StepStatus } from '../step-status.js';
import { transitionStep } from '../transition-step.js';

/**
 * Withdraws the forward steps of a run that are on their way but that no executor has claimed (INTENDED
 * with no lease), in the caller's transaction: each moves INTENDED → NOT_EXECUTED with `cause`. Nothing was
 * sent since their last dispatch, so "not executed" is the truth, and a job for one that arrives later finds
 * it not INTENDED and sends nothing. Returns the steps withdrawn.
 *
 * `FOR UPDATE SKIP LOCKED`: a row locked right now is being claimed (or settled) by someone else; waiting
 * for it could deadlock with a grouped claim that locks several rows in another order. A claim that wins
 * that row holds its lease before this transaction commits, so it ran first; the compensator then waits
 * for its outcome, as for any step under a live lease. A claim that comes after this commit finds the row
 * NOT_EXECUTED (or its run not running) and sends nothing.
 */
export async function withdrawUnclaimedSteps(
  trx: SagaTrx,
  w: { readonly runId: string; readonly cause: string; readonly schema: string },
): Promise<number[]> {
  const due = await trx
    .selectFrom('saga_log')
    .select('step_idx')
    .where('run_id', '=', w.runId)
    .where('status', '=', StepStatus.INTENDED)
    .where('lease_until', 'is', null)
    .orderBy('step_idx')
    .forUpdate()
    .skipLocked()
    .execute();
  for (const s of due)
    await transitionStep(trx, {
      runId: w.runId,
      stepIdx: s.step_idx,
      to: StepStatus.NOT_EXECUTED,
      onlyFrom: [StepStatus.INTENDED],
      cause: w.cause,
      schema: w.schema,
    });
  return due.map((s) => s.step_idx);
}
