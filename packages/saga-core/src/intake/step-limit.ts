import { BadRequestError, StepLimitError } from '../errors/errors.js';

/**
 * The cap on steps per run (SAGA_MAX_STEPS_PER_RUN): a run holds step indices `0 … cap - 1`, no more.
 *
 * Why a cap at all: a step index is an int4 column, and a run's view, its journal and its unwind grow with
 * its steps; an agent loop that never stops must meet a wall that writes nothing, not an int4 overflow (a
 * 500) or a run nobody can read.
 *
 * Why 1,000 by default: a saga definition has at most 100 steps and a plan at most 200 entries; an unbound
 * agent run that retries and re-plans stays well under a thousand steps, while `GET /v1/runs/{id}` with
 * every step still fits in one page (its default page is this size) and an unwind of them is minutes, not
 * hours.
 */
export const DEFAULT_MAX_STEPS_PER_RUN = 1_000;

/**
 * The highest cap a deployment may configure. Why 100,000: far below int4 (2^31 - 1), so no index a cap
 * admits can overflow the column, and large enough for any run a person can still review.
 */
export const MAX_STEPS_PER_RUN_CEILING = 100_000;

/**
 * Refuses, before anything is read or written, an explicit `stepIdx` or a `dependsOn` entry at or past the
 * cap: 400 BAD_REQUEST naming the field (the same refusal the API's body schema gives, for callers of
 * `recordCallerIntent` that have no such schema).
 */
export function checkRequestedIndices(
  stepIdx: number | undefined,
  dependsOn: readonly number[] | undefined,
  maxSteps: number,
): void {
  if (stepIdx !== undefined && stepIdx >= maxSteps)
    throw new BadRequestError(
      'stepIdx',
      `stepIdx: at most ${maxSteps - 1}: a run holds ${maxSteps} steps (SAGA_MAX_STEPS_PER_RUN)`,
    );
  const at = dependsOn?.findIndex((d) => d >= maxSteps) ?? -1;
  if (at >= 0)
    throw new BadRequestError(`dependsOn.${at}`, `dependsOn.${at}: at most ${maxSteps - 1}, like stepIdx`);
}

/**
 * Refuses a new step at `stepIdx` (the run's cursor, for a call without `stepIdx`) once the run is full:
 * 409 STEP_LIMIT. Checked only for a new step, so a retry of an existing step always answers.
 */
export function checkRunHasRoom(runId: string, stepIdx: number, maxSteps: number): void {
  if (stepIdx >= maxSteps) throw new StepLimitError(runId, maxSteps);
}
