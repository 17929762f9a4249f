import { StepConflictError, StepUnresolvedError } from '../errors/errors.js';
import { SETTLED_STEP_STATUSES, type StepStatus as StepStatusT } from '../steps/step-status.js';

/**
 * Which step a call belongs to. The harness owns step indices, never the model:
 *
 * 1. With `stepIdx` (the client library counts the run's steps and always sends it):
 *    - a row there with the same tool: a retry of that step;
 *    - a row there with another tool: STEP_CONFLICT;
 *    - no row there: a new step at that index, unless an earlier step of the run is still UNKNOWN
 *      (STEP_UNRESOLVED: the run may not go past an outcome nobody knows).
 * 2. Without `stepIdx`, the run's cursor, which moves past a step only once a response carried its settled
 *    outcome to the caller:
 *    - no row there: a new step at the cursor;
 *    - the same tool: a retry of that step, even if it settled meanwhile (the model that saw "unknown" and
 *      retries gets the one effect, not a second);
 *    - another tool at a settled step whose outcome the caller has not seen: STEP_UNRESOLVED carrying that
 *      outcome (`deliver-and-refuse`: the outcome is marked delivered, so the next call moves on);
 *    - another tool at an unsettled step: STEP_UNRESOLVED.
 */
export type StepResolution =
  | { readonly kind: 'new'; readonly stepIdx: number }
  | { readonly kind: 'retry'; readonly stepIdx: number }
  | { readonly kind: 'deliver-and-refuse'; readonly stepIdx: number };

export interface ResolutionInput {
  readonly tool: string;
  /** The `stepIdx` of the request, when it sent one. */
  readonly requestedIdx: number | undefined;
  readonly cursor: number;
  /** The row at the target index (the requested index, or the cursor), if there is one. */
  readonly existing:
    { readonly tool: string; readonly status: StepStatusT; readonly outcomeDelivered: boolean } | undefined;
  /** The lowest index below the requested one whose step is UNKNOWN (consulted for a new explicit step). */
  readonly earlierUnknownIdx: number | undefined;
}

/** Decides the step of a call (see the rules above). Throws StepConflictError or StepUnresolvedError. */
export function resolveStep(i: ResolutionInput): StepResolution {
  const explicit = i.requestedIdx !== undefined;
  const stepIdx = i.requestedIdx ?? i.cursor;
  const existing = i.existing;
  if (!existing) {
    if (explicit && i.earlierUnknownIdx !== undefined && i.earlierUnknownIdx < stepIdx)
      throw new StepUnresolvedError(
        i.earlierUnknownIdx,
        `step ${i.earlierUnknownIdx} has an unknown outcome; retry that step (same tool, same index) ` +
          `until it is resolved before starting step ${stepIdx}`,
      );
    return { kind: 'new', stepIdx };
  }
  if (existing.tool === i.tool) return { kind: 'retry', stepIdx };
  if (explicit)
    throw new StepConflictError(
      stepIdx,
      existing.tool,
      `step ${stepIdx} belongs to tool ${JSON.stringify(existing.tool)}, not ${JSON.stringify(i.tool)}`,
    );
  if (isSettled(existing.status)) {
    if (!existing.outcomeDelivered) return { kind: 'deliver-and-refuse', stepIdx };
    // The cursor never rests on a delivered step; if it does, the log is inconsistent: refuse.
    throw new StepConflictError(
      stepIdx,
      existing.tool,
      `step ${stepIdx} belongs to tool ${JSON.stringify(existing.tool)}`,
    );
  }
  throw new StepUnresolvedError(
    stepIdx,
    `step ${stepIdx} (${existing.tool}) is ${existing.status}; call ${JSON.stringify(existing.tool)} again ` +
      `to learn its outcome before calling another tool`,
  );
}

function isSettled(status: StepStatusT): boolean {
  return (SETTLED_STEP_STATUSES as readonly StepStatusT[]).includes(status);
}
