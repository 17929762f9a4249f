import { NotFoundError, type DeliveredOutcome, type StepRow, type StepStatus } from '@agent-saga/core';
import { isInFlight } from './call-outcome.js';
import type { DeliveryGroup } from './delivery-group.js';
import type { StepWatch } from './settle-waiter.js';

/**
 * Waits until the step `target` leaves INTENDED (or NOT_EXECUTED; see `waitsThrough`) or `waitMs` passes,
 * and returns the step as it then is. The watch must have been opened before this is called (before the
 * commit or the publish that could make the step settle), and the step is read after it, so no notification
 * is lost. Each wake is one NOTIFY for the step's key; there is no polling. `current` skips the first read
 * when the caller knows the step cannot have moved since it read it (see `settle` in handle-call.ts).
 *
 * Every read goes through the delivery group: the read that finds the step settled is the one whose outcome
 * the caller will receive, so it marks it delivered in the same statement (the returned row says
 * `outcome_delivered`). A read that finds it still on its way writes nothing.
 */
export async function awaitSettle(
  reads: DeliveryGroup,
  watch: StepWatch,
  target: DeliveredOutcome,
  waitMs: number,
  current?: StepRow,
  /** The statuses it waits through: in flight by default (`isUnresolved` for a retry of an unknown step). */
  waitsThrough: (status: StepStatus) => boolean = isInFlight,
): Promise<StepRow> {
  const deadline = Date.now() + waitMs;
  let step = current ?? (await readAndDeliver(reads, target));
  while (waitsThrough(step.status)) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const reason = await watch.next(left);
    if (reason === 'closed') break;
    step = await readAndDeliver(reads, target);
    if (reason === 'timeout') break;
  }
  return step;
}

/** The step, read (and delivered when settled) in a group with the other requests ready at the same time. */
async function readAndDeliver(reads: DeliveryGroup, target: DeliveredOutcome): Promise<StepRow> {
  const step = await reads.submit(target);
  if (!step) throw new NotFoundError(`no step ${target.stepIdx} in run ${target.runId}`);
  return step;
}
