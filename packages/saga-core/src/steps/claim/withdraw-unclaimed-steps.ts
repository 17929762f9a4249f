import type { SagaTrx } from '../../db/connect.js';
import type { StepRow } from '../../db/schema.js';
import { StepStatus } from '../step-status.js';
import { transitionStep } from '../transition-step.js';

/** The status an unclaimed INTENDED step is withdrawn to: see {@link withdrawnStatusOf}. */
export type WithdrawnStatus = typeof StepStatus.NOT_EXECUTED | typeof StepStatus.UNKNOWN;

/**
 * What an INTENDED step that no executor holds becomes when its run stops going forward, decided by how
 * many times it was sent (`saga_log.attempts`, read under the row lock):
 *
 * - none: NOT_EXECUTED. Nothing was ever sent under its key, so "not executed" is the truth and the
 *   compensator has nothing to undo.
 * - one or more: UNKNOWN. It was sent, came back unsettled, and was re-dispatched under its key; the
 *   re-dispatch is what waits unclaimed. That earlier send may still commit: a tool whose vendor dedupes by
 *   key (`dedupesByKey`) is sent again once its lookup lag has passed, before its commit horizon
 *   (`resendable` in `settle-from-lookup.ts`), while the vendor may still hold the first request. As
 *   UNKNOWN it is looked up by key (the compensator before any compensation, the reconciler), found →
 *   CONFIRMED and undone, believed absent only past the horizon plus the lag since `last_attempt_at`. Why
 *   not NOT_EXECUTED: the compensator skips it, and a late commit lands after the run says COMPENSATED (a
 *   reship the shipping sandbox held, `test/unwind-redispatched-held-send.test.ts`). A step whose earlier
 *   send was already proved absent costs one more lookup, which finds it absent at once.
 */
export function withdrawnStatusOf(attempts: number): WithdrawnStatus {
  return attempts === 0 ? StepStatus.NOT_EXECUTED : StepStatus.UNKNOWN;
}

/** The cause written on a withdrawal: `why`, then what {@link withdrawnStatusOf} concluded and why. */
export function withdrawalCause(why: string, attempts: number): string {
  return attempts === 0
    ? `${why} (never claimed, nothing sent)`
    : `${why} (not claimed since its re-dispatch; an earlier send under its key may still commit: looked up by key)`;
}

/** Parameters of {@link withdrawUnclaimedStep}. */
export interface WithdrawStepInput {
  readonly runId: string;
  readonly stepIdx: number;
  /** The step's `attempts`, read under the row lock the caller holds. */
  readonly attempts: number;
  /** Why the step is withdrawn (`withdrawn: run unwound: …`); {@link withdrawalCause} adds the rest. */
  readonly why: string;
  readonly detail?: Record<string, unknown>;
  readonly schema: string;
}

/**
 * Withdraws one INTENDED step with no lease, whose row the caller has locked (so its status, lease and
 * attempts are as read): INTENDED → {@link withdrawnStatusOf} by compare-and-set, with
 * {@link withdrawalCause} and `attempts` in the event. The one home of the rule for every path that
 * withdraws a step: an unwind or a stop ({@link withdrawUnclaimedSteps}), the executor's claim of a step
 * whose run no longer goes forward (`claimStep`), the compensator's pass. A job for the step that arrives
 * later finds it not INTENDED and sends nothing.
 */
export async function withdrawUnclaimedStep(trx: SagaTrx, w: WithdrawStepInput): Promise<StepRow> {
  return transitionStep(trx, {
    runId: w.runId,
    stepIdx: w.stepIdx,
    to: withdrawnStatusOf(w.attempts),
    onlyFrom: [StepStatus.INTENDED],
    cause: withdrawalCause(w.why, w.attempts),
    detail: { ...w.detail, attempts: w.attempts },
    schema: w.schema,
  });
}

/**
 * Withdraws the forward steps of a run that are on their way but that no executor has claimed (INTENDED
 * with no lease), in the caller's transaction, each by {@link withdrawUnclaimedStep}: NOT_EXECUTED when it
 * was never sent, UNKNOWN when an earlier send under its key may still commit ({@link withdrawnStatusOf}).
 * `why` is the reason, the start of each event's cause. Returns the steps withdrawn, with their new status.
 *
 * `FOR UPDATE SKIP LOCKED`: a row locked right now is being claimed (or settled) by someone else; waiting
 * for it could deadlock with a grouped claim that locks several rows in another order. A claim that wins
 * that row holds its lease before this transaction commits, so it ran first; the compensator then waits
 * for its outcome, as for any step under a live lease. A claim that comes after this commit finds the row
 * NOT_EXECUTED or UNKNOWN (or its run not running) and sends nothing.
 */
export async function withdrawUnclaimedSteps(
  trx: SagaTrx,
  w: { readonly runId: string; readonly why: string; readonly schema: string },
): Promise<{ readonly stepIdx: number; readonly status: WithdrawnStatus }[]> {
  const due = await trx
    .selectFrom('saga_log')
    .select(['step_idx', 'attempts'])
    .where('run_id', '=', w.runId)
    .where('status', '=', StepStatus.INTENDED)
    .where('lease_until', 'is', null)
    .orderBy('step_idx')
    .forUpdate()
    .skipLocked()
    .execute();
  for (const s of due)
    await withdrawUnclaimedStep(trx, {
      runId: w.runId,
      stepIdx: s.step_idx,
      attempts: s.attempts,
      why: w.why,
      schema: w.schema,
    });
  return due.map((s) => ({ stepIdx: s.step_idx, status: withdrawnStatusOf(s.attempts) }));
}
