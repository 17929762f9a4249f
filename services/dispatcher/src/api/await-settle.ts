import { NotFoundError, type StepRow } from '@agent-saga/core';
import { isInFlight } from './call-outcome.js';
import type { StepWatch } from './settle-waiter.js';
import type { StepReadGroup } from './step-read-group.js';

/**
 * Waits until the step under `key` leaves INTENDED (or NOT_EXECUTED) or `waitMs` passes, and returns the
 * step as it then is. The watch must have been opened before this is called (before the commit or the
 * publish that could make the step settle), and the step is read after it, so no notification is lost.
 * Each wake is one NOTIFY for this key; there is no polling. `current` skips the first read when the
 * caller knows the step cannot have moved since it read it (see `settle` in handle-call.ts).
 */
export async function awaitSettle(
  reads: StepReadGroup,
  watch: StepWatch,
  key: string,
  waitMs: number,
  current?: StepRow,
): Promise<StepRow> {
  const deadline = Date.now() + waitMs;
  let step = current ?? (await readByKey(reads, key));
  while (isInFlight(step.status)) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const reason = await watch.next(left);
    if (reason === 'closed') break;
    step = await readByKey(reads, key);
    if (reason === 'timeout') break;
  }
  return step;
}

/** The step under `key`, read in a group with the other requests woken at the same time. */
async function readByKey(reads: StepReadGroup, key: string): Promise<StepRow> {
  const step = await reads.submit(key);
  if (!step) throw new NotFoundError(`no step has key ${key}`);
  return step;
}
