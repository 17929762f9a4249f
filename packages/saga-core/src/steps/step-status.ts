// A status is defined once, here; the transition tables and HTTP schemas derive from it. Migrations spell
// their own lists as they stood (a new value needs a new migration); migrate.test.ts checks the two agree.

export const StepStatus = {
  /** Held for a human decision before anything is sent (irreversible, or no compensation possible). */
  AWAITING_APPROVAL: 'AWAITING_APPROVAL',
  /** Committed intent: the call may be under way. Never means "did not happen". */
  INTENDED: 'INTENDED',
  /** The effect exists in the real system; `external_ref` and `result` are set. */
  CONFIRMED: 'CONFIRMED',
  /** The real system definitively said no; nothing happened. */
  FAILED: 'FAILED',
  /** Nobody knows whether the effect happened (timeout, 5xx, reset, crash). */
  UNKNOWN: 'UNKNOWN',
  /** The reconciler proved, allowing for the system's search lag, that the effect does not exist. */
  NOT_EXECUTED: 'NOT_EXECUTED',
  /** A human refused the call before it was sent. */
  REJECTED: 'REJECTED',
  /** The harness could not settle the step on its own; a person must. */
  MANUAL_INTERVENTION: 'MANUAL_INTERVENTION',
} as const;
export type StepStatus = (typeof StepStatus)[keyof typeof StepStatus];

/** Step statuses whose outcome is settled: the caller may be told and the cursor may move past them. */
export const SETTLED_STEP_STATUSES = [
  StepStatus.CONFIRMED,
  StepStatus.FAILED,
  StepStatus.REJECTED,
] as const satisfies readonly StepStatus[];

/** Step statuses that a sweep (reconciler, inline lookup) must still resolve. */
export const UNRESOLVED_STEP_STATUSES = [
  StepStatus.INTENDED,
  StepStatus.UNKNOWN,
] as const satisfies readonly StepStatus[];

/**
 * Step statuses whose outcome is still to come while its run goes forward: held for a person
 * (AWAITING_APPROVAL), sent or about to be (INTENDED), not known until looked up (UNKNOWN), or proved absent
 * and so sent again (NOT_EXECUTED, while the run goes forward; in an unwound run it is final). A read that
 * waits for a step's outcome (`GET /v1/runs/{id}/steps/{idx}?waitMs=`) waits through these.
 */
export const OPEN_STEP_STATUSES = [
  StepStatus.AWAITING_APPROVAL,
  StepStatus.INTENDED,
  StepStatus.UNKNOWN,
  StepStatus.NOT_EXECUTED,
] as const satisfies readonly StepStatus[];
