import {
  EXECUTING_RUN_STATUSES,
  getRunFor,
  NotFoundError,
  OPEN_STEP_STATUSES,
  type RunAccess,
  type RunRow,
  type RunStatus,
  type SagaDb,
  type StepRow,
  type StepStatus,
} from '@agent-saga/core';
import { readStepsAt } from './read-run-pages.js';
import type { SettleWaiter, StepWatch } from './settle-waiter.js';

/**
 * The long polls of the log's readers: a read of a run that waits while its status is one of a set, and a
 * read of one step that waits for its outcome. An agent waiting for its run to end, for a pivot to be
 * decided or for an unknown step to be resolved asks once and is answered when it moves, instead of reading
 * the run every few hundred milliseconds (each read of a run is several statements; polling agents were
 * two thirds of the api's requests in the simulation, docs/simulation.md).
 *
 * Decisions:
 * - Woken by NOTIFY, not by polling: every move of a run's status announces the run's id, every settled or
 *   unknown step its key (`SettleWaiter`). The watch is opened before the read it guards, so a move that
 *   commits between the read and the wait still wakes it.
 * - A wake says "look again", not what changed: each is one read of the row waited on, and the answer is
 *   made from what that read finds.
 * - A re-read every {@link RECHECK_MS} besides: a status moved by a writer that does not announce it costs
 *   a waiter at most that long, never its whole `waitMs`. None is known; the cost is one read per waiter
 *   per interval.
 * - A step's wait ends when its run stops going forward (`EXECUTING_RUN_STATUSES`): an unwound run does
 *   not send its open steps again, so a NOT_EXECUTED or INTENDED step of it is as settled as it will get
 *   until the compensator decides.
 */

/** Why 5 s: a move nobody announced waits at most this; a waiter costs one read per interval. */
export const RECHECK_MS = 5_000;

/**
 * The run, read when `waitMs` is up or as soon as its status is not in `whileStatus`, whichever is first.
 * @throws NotFoundError when `access` may not see the run (at the first read, before any wait).
 */
export async function awaitRunStatus(
  db: SagaDb,
  waiter: SettleWaiter,
  access: RunAccess,
  runId: string,
  whileStatus: ReadonlySet<RunStatus>,
  waitMs: number,
): Promise<RunRow> {
  if (waitMs <= 0) return getRunFor(db, access, runId);
  const deadline = Date.now() + waitMs;
  const watch = waiter.watchRun(runId);
  try {
    let run = await getRunFor(db, access, runId);
    while (whileStatus.has(run.status) && (await woken(watch, deadline)))
      run = await getRunFor(db, access, runId);
    return run;
  } finally {
    watch.close();
  }
}

/** A step and its run, as {@link awaitStepOutcome} found them last. */
export interface StepAndRun {
  readonly run: RunRow;
  readonly step: StepRow;
}

const OPEN_STEP: ReadonlySet<StepStatus> = new Set(OPEN_STEP_STATUSES);
const EXECUTING_RUN: ReadonlySet<RunStatus> = new Set(EXECUTING_RUN_STATUSES);

/** Whether a step's outcome is still to come: an open status in a run that still goes forward. */
function stillOpen({ run, step }: StepAndRun): boolean {
  return OPEN_STEP.has(step.status) && EXECUTING_RUN.has(run.status);
}

/**
 * The step at `stepIdx`, read when `waitMs` is up or as soon as its outcome is in (no longer an open
 * status, or its run stopped going forward), whichever is first. Reading it never sends anything.
 * @throws NotFoundError when `access` may not see the run, or the run has no such step.
 */
export async function awaitStepOutcome(
  db: SagaDb,
  waiter: SettleWaiter,
  access: RunAccess,
  runId: string,
  stepIdx: number,
  waitMs: number,
): Promise<StepAndRun> {
  const deadline = Date.now() + waitMs;
  const read = async (): Promise<StepAndRun> => {
    const run = await getRunFor(db, access, runId);
    const [step] = await readStepsAt(db, runId, [stepIdx]);
    if (!step) throw new NotFoundError(`no step ${stepIdx} in run ${runId}`);
    return { run, step };
  };
  let found = await read();
  if (waitMs <= 0 || !stillOpen(found)) return found;
  // The key is known only now: watch, then read again, so a move between the first read and the watch
  // is not missed.
  const watch = waiter.watchRun(runId, found.step.idempotency_key);
  try {
    found = await read();
    while (stillOpen(found) && (await woken(watch, deadline))) found = await read();
    return found;
  } finally {
    watch.close();
  }
}

/** Waits for a wake, at most until `deadline` and {@link RECHECK_MS}; false when it is time to answer. */
async function woken(watch: StepWatch, deadline: number): Promise<boolean> {
  const left = deadline - Date.now();
  if (left <= 0) return false;
  const reason = await watch.next(Math.min(left, RECHECK_MS));
  return reason !== 'closed';
}
